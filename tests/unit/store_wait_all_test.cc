// unit tier: Store::waitAll, the one request in which a bootstrapping rank waits for the addresses of all the
// ranks it sends to, ended early by the abort notice. The same checks on every store (memory, file, tcp,
// prefixed); on the tcp store, the wire: a request with more keys than the protocol allows is refused, a
// client that leaves while its wait-all is held is forgotten, and a wait-all that timed out is resumed on
// its connection, not sent again.
#include <gtest/gtest.h>
#include <poll.h>
#include <stdlib.h>
#include <sys/socket.h>

#include <atomic>
#include <chrono>
#include <memory>
#include <thread>

#include "base/hello.h"
#include "base/socket.h"
#include "base/wire.h"
#include "rendezvous/comm_id.h"
#include "rendezvous/store.h"
#include "rendezvous/store_request.h"
#include "rendezvous/tcp_store.h"

namespace myriad {
namespace {

// `other` is the same store seen by another rank; every key is new to the store.
void exerciseWaitAll(Store& s, Store& other, const std::string& tag) {
  const std::string a = tag + ".a", b = tag + ".b", c = tag + ".c", stop = tag + ".stop";
  ASSERT_TRUE(other.set(a, Bytes{1}).isOk());
  ASSERT_TRUE(other.set(b, Bytes{2, 2}).isOk());
  // All present: the values in the order asked, a key asked twice answered twice.
  auto now = s.waitAll({b, a, b}, stop, 1000, nullptr);
  ASSERT_TRUE(now.isOk()) << now.status().message();
  EXPECT_FALSE(now.value().stopped);
  EXPECT_EQ(now.value().values, (std::vector<Bytes>{{2, 2}, {1}, {2, 2}}));
  // One key set later by another rank: answered once it is.
  std::thread later([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(60));
    other.set(c, Bytes{3}).ignore();
  });
  auto waited = s.waitAll({a, c}, "", 5000, nullptr);
  later.join();
  ASSERT_TRUE(waited.isOk()) << waited.status().message();
  EXPECT_EQ(waited.value().values, (std::vector<Bytes>{{1}, {3}}));
  // Missing keys, none set: a timeout that names a missing one.
  auto late = s.waitAll({a, tag + ".never"}, stop, 150, nullptr);
  ASSERT_EQ(late.status().code(), Code::kTimeout) << late.status().message();
  EXPECT_NE(late.status().message().find(tag + ".never"), std::string::npos) << late.status().message();
  // The stop key set while keys are missing ends the wait with its value, well before the deadline.
  std::thread stopper([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(60));
    other.set(stop, Bytes{'x'}).ignore();
  });
  const auto t0 = Clock::now();
  auto stopped = s.waitAll({a, tag + ".never"}, stop, 10000, nullptr);
  stopper.join();
  ASSERT_TRUE(stopped.isOk()) << stopped.status().message();
  EXPECT_TRUE(stopped.value().stopped);
  EXPECT_EQ(stopped.value().stop, Bytes{'x'});
  EXPECT_TRUE(stopped.value().values.empty());
  EXPECT_LT(msSince(t0), 5000);
  // Once the stop key is there, a wait-all naming it answers at once, whatever else is missing.
  auto already = s.waitAll({tag + ".never"}, stop, 10000, nullptr);
  ASSERT_TRUE(already.isOk() && already.value().stopped);
  // The caller's abort flag ends a wait; bad keys and an empty list are refused.
  std::atomic<bool> abort{true};
  EXPECT_FALSE(s.waitAll({tag + ".never"}, "", 10000, &abort).isOk());
  EXPECT_EQ(s.waitAll({}, "", 100, nullptr).status().code(), Code::kInvalidArgument);
  EXPECT_EQ(s.waitAll({"bad/key"}, "", 100, nullptr).status().code(), Code::kInvalidArgument);
}

TEST(StoreWaitAll, Memory) {
  MemoryStore s;
  exerciseWaitAll(s, s, "m");
}

TEST(StoreWaitAll, File) {
  char dir[] = "/tmp/myriad-filestore-XXXXXX";
  ASSERT_NE(mkdtemp(dir), nullptr);
  FileStore s(dir), other(dir);
  exerciseWaitAll(s, other, "f");
}

TEST(StoreWaitAll, Tcp) {
  SockAddr addr = SockAddr::parse("127.0.0.1:0").value();
  Secret secret = randomSecret();
  ASSERT_TRUE(startTcpStoreServer(&addr, secret).isOk());
  TcpStore s(addr, secret, 2000), other(addr, secret, 2000);
  exerciseWaitAll(s, other, "t");
  // Under a prefix (a split communicator's view), with and without the parent's abort flag.
  auto base = std::make_shared<TcpStore>(addr, secret, 2000);
  std::atomic<bool> parent{false};
  PrefixStore p1(base, "p1.", &parent), p1other(std::make_shared<TcpStore>(addr, secret, 2000), "p1.");
  exerciseWaitAll(p1, p1other, "t");
  EXPECT_EQ(other.tryGet("p1.t.c").value(), Bytes{3});  // the keys were prefixed
}

// A wait-all held at the server for a client that leaves is forgotten (the set that completes it finds no
// client to answer: ASan would see the use after free), and one client's wait-all that times out is resumed
// on its connection and answered there once the last key is set.
TEST(StoreWaitAll, TcpForgetsALeaverAndResumesAWaitThatTimedOut) {
  SockAddr addr = SockAddr::parse("127.0.0.1:0").value();
  Secret secret = randomSecret();
  ASSERT_TRUE(startTcpStoreServer(&addr, secret).isOk());
  {
    TcpStore leaver(addr, secret, 2000);
    auto gone = leaver.waitAll({"k.1", "k.2"}, "k.stop", 100, nullptr);
    EXPECT_EQ(gone.status().code(), Code::kTimeout) << gone.status().message();
  }
  TcpStore waiter(addr, secret, 2000), setter(addr, secret, 2000);
  auto first = waiter.waitAll({"k.1", "k.2"}, "k.stop", 100, nullptr);
  EXPECT_EQ(first.status().code(), Code::kTimeout);
  ASSERT_TRUE(setter.set("k.1", Bytes{1}).isOk());
  // Another request while the wait is owed goes on a second connection and is served.
  EXPECT_EQ(waiter.tryGet("k.1").value(), Bytes{1});
  ASSERT_TRUE(setter.set("k.2", Bytes{2}).isOk());
  auto resumed = waiter.waitAll({"k.1", "k.2"}, "k.stop", 2000, nullptr);
  ASSERT_TRUE(resumed.isOk()) << resumed.status().message();
  EXPECT_FALSE(resumed.value().stopped);
  EXPECT_EQ(resumed.value().values, (std::vector<Bytes>{{1}, {2}}));
  // The connection serves again after the owed reply.
  auto again = waiter.waitAll({"k.2"}, "k.stop", 1000, nullptr);
  ASSERT_TRUE(again.isOk()) << again.status().message();
  EXPECT_EQ(again.value().values, std::vector<Bytes>{{2}});
}

// A member that asks the server to hold more waits at once than any client of the library does (one per
// connection) is dropped: 16 held are served as usual, the 17th closes its connection, and the keys it waited
// on wake nobody dead (ASan would see it).
TEST(StoreWaitAll, TcpDropsAClientThatHoldsTooManyWaits) {
  SockAddr addr = SockAddr::parse("127.0.0.1:0").value();
  Secret secret = randomSecret();
  ASSERT_TRUE(startTcpStoreServer(&addr, secret).isOk());
  auto hold = [&](int waits) {
    Fd sock(connectTo(addr, deadlineIn(1000), nullptr).value());
    Handshake hello(Handshake::Role::kOpener, storeproto::helloKey(secret), storeproto::helloIdent());
    EXPECT_TRUE(hello.run(sock.get(), deadlineIn(2000), nullptr).isOk());
    Writer w;
    for (int i = 0; i < waits; ++i) {
      w.u8(i % 2 ? storeproto::kGetWait : storeproto::kWaitAll);
      if (i % 2) {
        w.str("held." + std::to_string(i));
      } else {
        w.str("");
        w.u32(1);
        w.str("held." + std::to_string(i));
      }
    }
    EXPECT_TRUE(sendAll(sock.get(), w.bytes().data(), w.bytes().size(), deadlineIn(1000), "store").isOk());
    return sock;
  };
  Fd fine = hold(16), greedy = hold(17);
  uint8_t byte = 0;
  pollfd p{greedy.get(), POLLIN, 0};
  ASSERT_EQ(poll(&p, 1, 5000), 1);
  EXPECT_EQ(recv(greedy.get(), &byte, 1, 0), 0) << "the 17th wait closes the connection";
  TcpStore setter(addr, secret, 2000);
  ASSERT_TRUE(setter.set("held.3", Bytes{3}).isOk());  // wakes the first client's get-wait, and nobody dropped
  pollfd q{fine.get(), POLLIN, 0};
  ASSERT_EQ(poll(&q, 1, 5000), 1);
  uint8_t reply[10] = {};
  ASSERT_EQ(recv(fine.get(), reply, sizeof reply, MSG_WAITALL), 10);
  EXPECT_EQ(reply[0], 1);  // found, 8 bytes of length 1, the value
  EXPECT_EQ(reply[1], 1);
  EXPECT_EQ(reply[9], 3);
}

// A store that records what reaches it, to see what a wrapper forwards.
class RecordingStore final : public Store {
 public:
  Status set(const std::string& key, const Bytes& value) override { return inner_.set(key, value); }
  Result<Bytes> get(const std::string& key, int timeoutMs, const std::atomic<bool>* abort) override {
    ++gets;
    return inner_.get(key, timeoutMs, abort);
  }
  Result<Bytes> tryGet(const std::string& key) override {
    ++gets;
    return inner_.tryGet(key);
  }
  Result<WaitAll> waitAll(const std::vector<std::string>& keys, const std::string& stopKey, int timeoutMs,
                          const std::atomic<bool>* abort) override {
    asked = keys, stop = stopKey;
    return inner_.waitAll(keys, stopKey, timeoutMs, abort);
  }
  std::string describe() const override { return "recording store"; }
  int gets = 0;
  std::vector<std::string> asked;
  std::string stop;

 private:
  MemoryStore inner_;
};

// A second communicator on a MYRIAD_COMM_ID root sees the store through its generation's names; its
// wait-all reaches the store whole, renamed, as one request (the default would poll the stop key).
TEST(StoreWaitAll, ACommIdGenerationForwardsItWhole) {
  auto id = uniqueIdFromCommId("127.0.0.1:1", "");
  ASSERT_TRUE(id.isOk()) << id.status().message();
  auto recording = std::make_shared<RecordingStore>();
  std::shared_ptr<Store> store = recording;
  UniqueId first = id.value(), second = id.value();
  ASSERT_TRUE(prepareRootAtInit(1, &first, &store).isOk());  // generation 0: the store as it is
  ASSERT_EQ(store.get(), recording.get());
  ASSERT_TRUE(prepareRootAtInit(1, &second, &store).isOk());  // generation 1: its own names
  ASSERT_NE(store.get(), recording.get());
  ASSERT_TRUE(store->set("boot.1", Bytes{7}).isOk());
  auto got = store->waitAll({"boot.1"}, "boot.abort", 1000, nullptr);
  ASSERT_TRUE(got.isOk()) << got.status().message();
  EXPECT_EQ(got.value().values, std::vector<Bytes>{{7}});
  EXPECT_EQ(recording->asked, std::vector<std::string>{"gen1.boot.1"});
  EXPECT_EQ(recording->stop, "gen1.boot.abort");
  EXPECT_EQ(recording->gets, 0);
}

// The wire: a wait-all of 65 keys (more than kMaxWaitKeys) or with a key of length 0 is no request, and the
// parser says so; the largest one allowed, with an empty stop key, parses and every prefix asks for more.
TEST(StoreWaitAll, ParserBoundsTheKeys) {
  auto wire = [](uint32_t count, const std::string& stop, uint32_t emptyAt) {
    Writer w;
    w.u8(storeproto::kWaitAll);
    w.str(stop);
    w.u32(count);
    for (uint32_t i = 0; i < count; ++i) w.str(i == emptyAt ? std::string() : "boot." + std::to_string(i));
    return w.bytes();
  };
  const Bytes most = wire(storeproto::kMaxWaitKeys, "", ~0u);
  auto ok = storeproto::parseRequest(most.data(), most.size());
  ASSERT_EQ(ok.parse, storeproto::Request::Parse::kOk) << ok.why;
  EXPECT_EQ(ok.used, most.size());
  EXPECT_TRUE(ok.key.empty());
  ASSERT_EQ(ok.keys.size(), storeproto::kMaxWaitKeys);
  EXPECT_EQ(ok.keys.back(), "boot." + std::to_string(storeproto::kMaxWaitKeys - 1));
  for (size_t cut = 0; cut < most.size(); cut += 7)
    EXPECT_EQ(storeproto::parseRequest(most.data(), cut).parse, storeproto::Request::Parse::kNeedMore) << cut;
  const Bytes tooMany = wire(storeproto::kMaxWaitKeys + 1, "boot.abort", ~0u);
  auto refused = storeproto::parseRequest(tooMany.data(), tooMany.size());
  EXPECT_EQ(refused.parse, storeproto::Request::Parse::kBad);
  EXPECT_NE(refused.why.find("65 keys"), std::string::npos) << refused.why;
  const Bytes emptyKey = wire(3, "boot.abort", 1);
  EXPECT_EQ(storeproto::parseRequest(emptyKey.data(), emptyKey.size()).parse, storeproto::Request::Parse::kBad);
  const Bytes none = wire(0, "", ~0u);
  EXPECT_EQ(storeproto::parseRequest(none.data(), none.size()).parse, storeproto::Request::Parse::kBad);
}

}  // namespace
}  // namespace myriad
