// unit tier: Status, Config (the environment table), unique-id encoding, and the stores, including a tcp
// store facing a wrong secret and hostile bytes.
#include <gtest/gtest.h>
#include <poll.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <memory>
#include <thread>

#include "base/config.h"
#include "base/socket.h"
#include "base/status.h"
#include "base/wire.h"
#include "rendezvous/peer_info.h"
#include "rendezvous/store.h"
#include "rendezvous/tcp_store.h"
#include "rendezvous/unique_id.h"

namespace myriad {
namespace {

TEST(Status, CodesMirrorTheCApi) {
  EXPECT_EQ(Status().toC(), myrSuccess);
  EXPECT_EQ(invalidArgument("x").toC(), myrInvalidArgument);
  EXPECT_EQ(Status(Code::kTimeout, "t").toC(), myrTimeout);
  EXPECT_EQ(notSupported("n").toC(), myrInvalidUsage);  // internal code never crosses the C API
  Status s = systemError("connect to 10.0.0.1:4", ECONNREFUSED);
  EXPECT_NE(s.message().find("errno 111"), std::string::npos) << s.message();
  s.addContext("rank 2");
  EXPECT_EQ(s.message().rfind("rank 2: connect", 0), 0u) << s.message();
}

TEST(Status, ResultCarriesValueOrStatus) {
  Result<int> good(5);
  ASSERT_TRUE(good.isOk());
  EXPECT_EQ(good.value(), 5);
  Result<int> bad(invalidUsage("nope"));
  ASSERT_FALSE(bad.isOk());
  EXPECT_EQ(bad.status().code(), Code::kInvalidUsage);
}

class EnvGuard {
 public:
  EnvGuard(const char* name, const char* value) : name_(name) {
    if (const char* old = getenv(name)) old_ = old, had_ = true;
    setenv(name, value, 1);
  }
  ~EnvGuard() { had_ ? setenv(name_, old_.c_str(), 1) : unsetenv(name_); }

 private:
  const char* name_;
  std::string old_;
  bool had_ = false;
};

TEST(Config, DefaultsComeFromTheTable) {
  auto c = Config::fromEnv();
  ASSERT_TRUE(c.isOk()) << c.status().message();
  for (const auto& e : envTable()) {
    if (std::string(e.name) == "MYRIAD_TIMEOUT_MS" && !getenv(e.name)) {
      EXPECT_EQ(std::to_string(c.value().timeoutMs), e.defaultValue);
    }
    EXPECT_NE(std::string(e.doc), "");
  }
  EXPECT_NE(envTableMarkdown().find("MYRIAD_DISABLE_SHM"), std::string::npos);
}

TEST(Config, ParsesSizesAndBooleans) {
  EnvGuard a("MYRIAD_CHUNK_BYTES", "2M"), b("MYRIAD_DISABLE_SHM", "1"), c("MYRIAD_TIMEOUT_MS", "750");
  auto cfg = Config::fromEnv();
  ASSERT_TRUE(cfg.isOk()) << cfg.status().message();
  EXPECT_EQ(cfg.value().chunkBytes, size_t{2} << 20);
  EXPECT_TRUE(cfg.value().disableShm);
  EXPECT_EQ(cfg.value().timeoutMs, 750);
}

TEST(Config, MalformedValuesNameTheVariable) {
  for (auto [name, value] : {std::pair{"MYRIAD_TIMEOUT_MS", "soon"},
                             {"MYRIAD_TIMEOUT_MS", "-5"},
                             {"MYRIAD_DISABLE_SHM", "maybe"},
                             {"MYRIAD_CHUNK_BYTES", "12Q"},
                             {"MYRIAD_SHM_MODE", "teleport"},
                             {"MYRIAD_DEBUG", "LOUD"}}) {
    EnvGuard g(name, value);
    auto cfg = Config::fromEnv();
    ASSERT_FALSE(cfg.isOk()) << name << "=" << value;
    EXPECT_EQ(cfg.status().code(), Code::kInvalidArgument);
    EXPECT_NE(cfg.status().message().find(name), std::string::npos) << cfg.status().message();
  }
}

TEST(UniqueId, RoundTripsTcpAndFileKinds) {
  UniqueId id;
  id.secret = randomSecret();
  auto addr = SockAddr::parse("127.0.0.1:4321");
  ASSERT_TRUE(addr.isOk());
  id.tcpRoot = addr.value();
  auto back = UniqueId::decode(id.encode());
  ASSERT_TRUE(back.isOk()) << back.status().message();
  EXPECT_TRUE(secretEquals(back.value().secret, id.secret));
  EXPECT_EQ(back.value().tcpRoot.toString(), "127.0.0.1:4321");
  EXPECT_EQ(back.value().tag(), id.tag());

  UniqueId f;
  f.kind = IdKind::kFile;
  f.secret = randomSecret();
  f.fileDir = "/tmp/myriad-store";
  auto fb = UniqueId::decode(f.encode());
  ASSERT_TRUE(fb.isOk());
  EXPECT_EQ(fb.value().fileDir, f.fileDir);
}

TEST(UniqueId, RejectsGarbage) {
  myrUniqueId raw{};
  EXPECT_EQ(UniqueId::decode(raw).status().code(), Code::kInvalidArgument);
  UniqueId id;
  id.secret = randomSecret();
  id.tcpRoot = SockAddr::parse("127.0.0.1:1").value();
  raw = id.encode();
  raw.internal[5] = 9;  // unknown kind
  EXPECT_EQ(UniqueId::decode(raw).status().code(), Code::kInvalidArgument);
  raw = id.encode();
  raw.internal[24] = 77;  // unknown address family
  EXPECT_EQ(UniqueId::decode(raw).status().code(), Code::kInvalidArgument);
}

// A rank's description carries its machine (what emulated hosts share) and the cores it may use: the tuner
// prices ranks that outnumber their machine's cores, and the executor sleeps rather than spins there.
TEST(PeerInfo, CarriesTheMachineAndItsCoresAndRefusesANegativeCount) {
  PeerInfo p;
  p.rank = 3;
  p.hostId = "emulated-host-1";
  p.machineId = localMachineId();
  p.cores = localCores();
  EXPECT_FALSE(p.machineId.empty());
  EXPECT_EQ(p.machineId, localMachineId());
  EXPECT_GE(p.cores, 1);
  Writer w;
  p.encode(w);
  Reader r(w.bytes());
  auto q = PeerInfo::decode(r);
  ASSERT_TRUE(q.isOk()) << q.status().message();
  EXPECT_EQ(q.value().machineId, p.machineId);
  EXPECT_EQ(q.value().cores, p.cores);
  p.cores = -2;
  Writer bad;
  p.encode(bad);
  Reader rb(bad.bytes());
  EXPECT_EQ(PeerInfo::decode(rb).status().code(), Code::kInvalidArgument);
}

TEST(UniqueId, SecretsDiffer) {
  EXPECT_FALSE(secretEquals(randomSecret(), randomSecret()));
}

// `other` sets the key that `s` waits for (the same store seen by another rank).
void exerciseStore(Store& s, Store& other) {
  ASSERT_TRUE(s.set("k1", Bytes{1, 2, 3}).isOk());
  auto v = s.get("k1", 1000, nullptr);
  ASSERT_TRUE(v.isOk()) << v.status().message();
  EXPECT_EQ(v.value(), (Bytes{1, 2, 3}));
  EXPECT_EQ(s.tryGet("absent").status().code(), Code::kNotSupported);
  auto t = s.get("never", 50, nullptr);
  EXPECT_EQ(t.status().code(), Code::kTimeout);
  std::thread later([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(30));
    other.set("late", Bytes{9}).ignore();
  });
  auto w = s.get("late", 5000, nullptr);
  later.join();
  ASSERT_TRUE(w.isOk()) << w.status().message();
  EXPECT_EQ(w.value(), Bytes{9});
  std::atomic<bool> abort{true};
  EXPECT_FALSE(s.get("never", 5000, &abort).isOk());
  EXPECT_EQ(s.set("bad/key", Bytes{}).code(), Code::kInvalidArgument);
}

TEST(Store, Memory) {
  MemoryStore s;
  exerciseStore(s, s);
}

TEST(Store, File) {
  char dir[] = "/tmp/myriad-filestore-XXXXXX";
  ASSERT_NE(mkdtemp(dir), nullptr);
  FileStore s(dir), other(dir);
  exerciseStore(s, other);
}

TEST(Store, TcpServesMembersAndDropsStrangers) {
  SockAddr addr = SockAddr::parse("127.0.0.1:0").value();
  Secret secret = randomSecret();
  ASSERT_TRUE(startTcpStoreServer(&addr, secret).isOk());
  TcpStore member(addr, secret, 2000), other(addr, secret, 2000);
  exerciseStore(member, other);

  Secret wrong = secret;
  wrong[3] ^= 0xff;
  TcpStore stranger(addr, wrong, 2000);
  auto r = stranger.tryGet("k1");
  ASSERT_FALSE(r.isOk());
  EXPECT_EQ(r.status().code(), Code::kRemoteError);
  EXPECT_NE(r.status().message().find("wrong secret"), std::string::npos) << r.status().message();

  // Hostile bytes: junk instead of a hello, a hello then an unknown op, an oversized key. Each is dropped;
  // the server keeps serving members.
  for (const Bytes& junk : {Bytes(64, 0xab), Bytes{'M', 'Y', 'R', 'S'}, Bytes(3, 0)}) {
    auto fd = connectTo(addr, deadlineIn(1000), nullptr);
    ASSERT_TRUE(fd.isOk());
    Fd sock(fd.value());
    Bytes msg = junk;
    if (junk.size() == 4) {  // a valid hello, then op 77 with a 2^31-byte key
      Handshake hello(Handshake::Role::kOpener, storeproto::helloKey(secret), storeproto::helloIdent());
      ASSERT_TRUE(hello.run(sock.get(), deadlineIn(2000), nullptr).isOk());
      msg = {77, 0, 0, 0, 0x80};
    }
    ASSERT_TRUE(sendAll(sock.get(), msg.data(), msg.size(), deadlineIn(1000), "store").isOk());
  }
  // A recorded hello (a member's Open and Proof) replayed on a new connection, then a request: the server
  // answers with a fresh nonce, the old proof fails, and the request is never served.
  std::vector<uint8_t> recorded;
  {
    Fd sock(connectTo(addr, deadlineIn(1000), nullptr).value());
    Handshake hello(Handshake::Role::kOpener, storeproto::helloKey(secret), storeproto::helloIdent());
    ASSERT_TRUE(hello.run(sock.get(), deadlineIn(2000), nullptr).isOk());
    recorded = hello.sent();
  }
  {
    Fd sock(connectTo(addr, deadlineIn(1000), nullptr).value());
    Bytes msg(recorded.begin(), recorded.end());
    msg.insert(msg.end(), {storeproto::kTryGet, 2, 0, 0, 0, 'k', '1'});
    ASSERT_TRUE(sendAll(sock.get(), msg.data(), msg.size(), deadlineIn(1000), "store").isOk());
    uint8_t reply[128];
    size_t got = 0;
    while (true) {  // the server's Answer (56 bytes), then the close: never a reply to the request
      ssize_t n = recv(sock.get(), reply + got, sizeof(reply) - got, 0);
      if (n <= 0) break;
      got += static_cast<size_t>(n);
    }
    EXPECT_EQ(got, 56u);
  }
  auto again = member.get("k1", 1000, nullptr);
  ASSERT_TRUE(again.isOk()) << again.status().message();
  EXPECT_EQ(again.value(), (Bytes{1, 2, 3}));
}

// The server among many clients (every rank keeps its client open through init): 300 quiet clients stay
// connected while others wait, a waiting client that leaves is forgotten (its get-wait is not answered into
// a closed connection: ASan would see the use after free), a client silent in its hello does not hold up the
// others, and every waiter still present is woken by the set.
TEST(Store, TcpServesWaitersAmongManyClientsAndForgetsOnesThatLeave) {
  SockAddr addr = SockAddr::parse("127.0.0.1:0").value();
  Secret secret = randomSecret();
  ASSERT_TRUE(startTcpStoreServer(&addr, secret).isOk());
  std::vector<std::unique_ptr<TcpStore>> quiet;
  for (int c = 0; c < 300; ++c) {
    quiet.push_back(std::make_unique<TcpStore>(addr, secret, 2000));
    ASSERT_TRUE(quiet.back()->set("q." + std::to_string(c), Bytes{static_cast<uint8_t>(c)}).isOk()) << c;
  }
  Fd silent(connectTo(addr, deadlineIn(1000), nullptr).value());  // connected, never says its hello
  {
    TcpStore leaver(addr, secret, 2000);  // its get-wait stays parked at the server when it gives up
    auto gone = leaver.get("x", 100, nullptr);
    ASSERT_FALSE(gone.isOk());
    EXPECT_EQ(gone.status().code(), Code::kTimeout);
  }
  TcpStore waiter(addr, secret, 2000), setter(addr, secret, 2000);
  Result<Bytes> woken = Status(Code::kInternalError, "not run");
  std::thread t([&] { woken = waiter.get("x", 5000, nullptr); });
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  ASSERT_TRUE(setter.set("x", Bytes{9, 9}).isOk());
  t.join();
  ASSERT_TRUE(woken.isOk()) << woken.status().message();
  EXPECT_EQ(woken.value(), (Bytes{9, 9}));
  for (int c = 0; c < 300; c += 37) {
    auto v = quiet[static_cast<size_t>(c)]->get("q." + std::to_string(299 - c), 1000, nullptr);
    ASSERT_TRUE(v.isOk()) << c << ": " << v.status().message();
    EXPECT_EQ(v.value(), (Bytes{static_cast<uint8_t>(299 - c)}));
  }
  quiet.clear();  // 300 disconnects at once
  TcpStore late(addr, secret, 2000);
  auto owner = late.tryGet(kStoreOwnerKey);
  ASSERT_TRUE(owner.isOk()) << owner.status().message();
}

// A get that times out leaves its reply owed on its connection: the same get again waits for that reply
// there (a new connection would cost the root a hello per second per waiting rank at init), other requests
// meanwhile go on a second connection, and once the reply is read the first connection serves again. A fake
// root: it parks the get of "x" on the first connection, serves a tryGet on the second, answers "x" when
// told to (checking that the get was not sent twice), then serves a tryGet on the first.
TEST(Store, TcpGetThatTimesOutIsResumedOnItsConnection) {
  SockAddr addr = SockAddr::parse("127.0.0.1:0").value();
  auto lfd = listenOn(&addr, 16);
  ASSERT_TRUE(lfd.isOk());
  Fd listener(lfd.value());
  Secret secret = randomSecret();
  std::atomic<int> accepted{0}, gets{0};
  std::atomic<bool> answer{false};
  std::string rootError;
  std::thread root([&] {
    auto acceptOne = [&](Fd* c) {
      pollfd p{listener.get(), POLLIN, 0};
      if (poll(&p, 1, 3000) <= 0) return false;
      *c = Fd(accept(listener.get(), nullptr, nullptr));
      ++accepted;
      Handshake hello(Handshake::Role::kAccepter, storeproto::helloKey(secret), HelloIdent{});
      return c->get() >= 0 && hello.run(c->get(), deadlineIn(2000), nullptr).isOk();
    };
    auto expect = [&](int c, uint8_t op) {  // a request of a one-letter key: op, key length u32, key
      uint8_t req[6];
      return recvAll(c, req, 6, deadlineIn(3000), "client").isOk() && req[0] == op;
    };
    const uint8_t absent = 0, yes[] = {1, 3, 0, 0, 0, 0, 0, 0, 0, 'y', 'e', 's'};
    Fd first, second;
    if (!acceptOne(&first) || !expect(first.get(), storeproto::kGetWait)) return void(rootError = "first get");
    ++gets;
    if (!acceptOne(&second) || !expect(second.get(), storeproto::kTryGet) ||
        !sendAll(second.get(), &absent, 1, deadlineIn(2000), "client").isOk())
      return void(rootError = "tryGet on the second connection");
    while (!answer.load()) std::this_thread::sleep_for(std::chrono::milliseconds(5));
    uint8_t more = 0;  // the get sent again would be bytes here
    if (recv(first.get(), &more, 1, MSG_DONTWAIT) == 1) ++gets;
    if (!sendAll(first.get(), yes, sizeof yes, deadlineIn(2000), "client").isOk()) return void(rootError = "yes");
    if (!expect(first.get(), storeproto::kTryGet) ||
        !sendAll(first.get(), &absent, 1, deadlineIn(2000), "client").isOk())
      rootError = "tryGet on the first connection";
  });
  TcpStore client(addr, secret, 5000);
  auto first = client.get("x", 100, nullptr);
  ASSERT_FALSE(first.isOk());
  EXPECT_EQ(first.status().code(), Code::kTimeout);
  auto meanwhile = client.tryGet("k");
  EXPECT_EQ(meanwhile.status().message(), "absent") << meanwhile.status().toString();
  EXPECT_EQ(accepted.load(), 2);
  std::thread later([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    answer = true;
  });
  auto second = client.get("x", 3000, nullptr);
  later.join();
  ASSERT_TRUE(second.isOk()) << second.status().toString();
  EXPECT_EQ(second.value(), (Bytes{'y', 'e', 's'}));
  EXPECT_EQ(gets.load(), 1) << "the get was sent again instead of waiting for the owed reply";
  auto after = client.tryGet("j");
  root.join();
  EXPECT_EQ(after.status().message(), "absent") << after.status().toString();
  EXPECT_EQ(accepted.load(), 2);
  EXPECT_EQ(rootError, "");
}

// A root that drops a client in the middle of its hello (too slow to answer: thousands of ranks starting at
// once on a few cores) is tried again on a new connection; one that drops every attempt fails the request
// after 4, saying so. The fake root accepts, drops the first `drops` connections before answering, then
// completes the hello and answers one tryGet with "absent".
TEST(Store, TcpClientTriesAgainWhenTheRootDropsItsHello) {
  for (int drops : {2, 9}) {
    SCOPED_TRACE(drops);
    SockAddr addr = SockAddr::parse("127.0.0.1:0").value();
    auto lfd = listenOn(&addr, 16);
    ASSERT_TRUE(lfd.isOk());
    Fd listener(lfd.value());
    Secret secret = randomSecret();
    std::atomic<int> accepted{0};
    std::thread root([&] {
      while (true) {
        pollfd p{listener.get(), POLLIN, 0};
        if (poll(&p, 1, 1500) <= 0) return;  // the client gave up
        Fd c(accept(listener.get(), nullptr, nullptr));
        if (c.get() < 0) return;
        if (++accepted <= drops) continue;  // closed before the Answer
        Handshake hello(Handshake::Role::kAccepter, storeproto::helloKey(secret), HelloIdent{});
        if (!hello.run(c.get(), deadlineIn(2000), nullptr).isOk()) return;
        uint8_t req[6];  // what a tryGet of "k" sends (op, key length u32, "k"); then "absent"
        if (!recvAll(c.get(), req, 6, deadlineIn(2000), "client").isOk()) return;
        uint8_t absent = 0;
        (void)sendAll(c.get(), &absent, 1, deadlineIn(2000), "client");
        return;
      }
    });
    TcpStore client(addr, secret, 5000);
    auto r = client.tryGet("k");
    root.join();
    ASSERT_FALSE(r.isOk());
    if (drops < 4) {
      EXPECT_EQ(accepted.load(), drops + 1);
      EXPECT_EQ(r.status().message(), "absent") << r.status().toString();
    } else {
      EXPECT_EQ(accepted.load(), 4);
      EXPECT_NE(r.status().message().find(std::string(kHelloClosed) + " (4 times"), std::string::npos)
          << r.status().toString();
    }
  }
}

}  // namespace
}  // namespace myriad

namespace myriad {
namespace {

// A split's child waits in its parent's store; a failure of the parent (the flag) ends the wait at once.
TEST(PrefixStore, ASecondAbortFlagEndsAWait) {
  auto base = std::make_shared<MemoryStore>();
  std::atomic<bool> parentFailed{false};
  PrefixStore store(base, "split0.", &parentFailed);
  ASSERT_TRUE(store.set("a", Bytes{1}).isOk());
  auto got = store.get("a", 1000, nullptr);
  ASSERT_TRUE(got.isOk());
  EXPECT_EQ(base->tryGet("split0.a").value(), Bytes{1});
  std::thread t([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(150));
    parentFailed.store(true);
  });
  const auto t0 = Clock::now();
  auto never = store.get("never", 20000, nullptr);
  t.join();
  EXPECT_EQ(never.status().code(), Code::kRemoteError) << never.status().message();
  EXPECT_NE(never.status().message().find("parent communicator failed"), std::string::npos);
  EXPECT_LT(msSince(t0), 2000);
  // Without the flag raised, a wait ends at its own deadline with a timeout.
  std::atomic<bool> calm{false};
  PrefixStore quiet(base, "split1.", &calm);
  auto late = quiet.get("never", 450, nullptr);
  EXPECT_EQ(late.status().code(), Code::kTimeout) << late.status().message();
}

}  // namespace
}  // namespace myriad
