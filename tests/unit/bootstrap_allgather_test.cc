// The bootstrap's ring all-gather (core/bootstrap_allgather.h), ranks as threads over a memory store: every rank
// gets every description in rank order, whatever the ring's size; the store holds only the small ring
// addresses; a rank started with another nranks, or one that gives up, makes every rank fail with its reason
// within seconds; a connection with hostile bytes or the wrong key on a rank's bootstrap port is refused and the
// exchange still completes.
#include "core/bootstrap_allgather.h"

#include <gtest/gtest.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "base/hello.h"
#include "base/socket.h"
#include "core/bootstrap_frames.h"
#include "rendezvous/store.h"

namespace myriad {
namespace {

Bytes describe(int rank) {  // a description of its own length, so that a mixed-up order shows
  std::string text = "rank " + std::to_string(rank) + std::string(static_cast<size_t>(rank) * 37, '*');
  return Bytes(text.begin(), text.end());
}

struct Outcome {
  Result<std::vector<Bytes>> got = Status(Code::kInternalError, "not run");
  double seconds = 0;
};

// Runs ranks [0, n) as threads: rank r's nranks from `nranksOf` (default n), its abort flag from `cancel`.
std::vector<Outcome> exchange(int n, Store& store, int timeoutMs, std::vector<int> nranksOf = {},
                              const std::vector<std::atomic<bool>*>& cancel = {}) {
  std::vector<Outcome> out(static_cast<size_t>(n));
  std::vector<std::thread> threads;
  for (int r = 0; r < n; ++r) {
    threads.emplace_back([&, r] {
      BootstrapExchange x;
      x.store = &store;
      x.rank = r;
      x.nranks = nranksOf.empty() ? n : nranksOf[static_cast<size_t>(r)];
      x.key[0] = 7;
      x.ifname = "lo";
      x.timeoutMs = timeoutMs;
      x.cancel = cancel.empty() ? nullptr : cancel[static_cast<size_t>(r)];
      const auto start = std::chrono::steady_clock::now();
      out[static_cast<size_t>(r)].got = bootstrapAllGather(x, describe(r));
      out[static_cast<size_t>(r)].seconds =
          std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    });
  }
  for (auto& t : threads) t.join();
  return out;
}

// The abort notice's polling schedule: 0.1 s, then doubling, capped at 2 s for a few thousand ranks and
// at n x 0.1 ms beyond, so that the store's root serves at most 10,000 reads a second however many wait.
TEST(BootstrapAllGather, AbortNoticePollsBackOffAndHoldTheRootToTenThousandReadsASecond) {
  using std::chrono::milliseconds;
  const milliseconds firsts[] = {milliseconds(100),  milliseconds(200),  milliseconds(400), milliseconds(800),
                                 milliseconds(1600), milliseconds(2000), milliseconds(2000)};
  for (int k = 0; k < 7; ++k) EXPECT_EQ(abortNoticeWait(16, k), firsts[k]) << k;
  EXPECT_EQ(abortNoticeWait(131072, 100), milliseconds(13108));
  EXPECT_EQ(abortNoticeWait(131072, 0), milliseconds(13108));  // from the first read on: n x 0.1 ms apart
  EXPECT_EQ(abortNoticeWait(4096, 0), milliseconds(410));
  EXPECT_EQ(abortNoticeWait(4096, 2), milliseconds(410));
  EXPECT_EQ(abortNoticeWait(4096, 3), milliseconds(800));
  for (int n : {1, 2, 1000, 4096, 20000, 20001, 65536, 131072}) {
    EXPECT_GE(abortNoticeWait(n, 1000), milliseconds(2000)) << n;
    for (int k = 0; k < 40; ++k) {  // every read, the first ones too: n ranks reading at most 10,000 times a second
      EXPECT_LE(static_cast<double>(n) / (static_cast<double>(abortNoticeWait(n, k).count()) / 1000), 10000.0)
          << n << " " << k;
      if (k > 0) {
        EXPECT_GE(abortNoticeWait(n, k), abortNoticeWait(n, k - 1)) << n << " " << k;
      }
    }
  }
}

// The frames on their own: what a round sends is what the next rank reads, and a frame that says one thing
// and carries another (a description too long, one missing, bytes left over) is refused by name.
TEST(BootstrapFrames, RoundsRoundTripAndMalformedOnesAreRefused) {
  namespace bf = bootframe;
  const Bytes a = {1, 2, 3}, empty, b(100, 7);
  const Bytes frame = bf::encodeRound({&a, &empty, &b});
  uint32_t body = 0;
  std::memcpy(&body, frame.data(), 4);
  ASSERT_EQ(body, frame.size() - 4);
  const Bytes wire(frame.begin() + 4, frame.end());
  auto got = bf::decodeRound(wire, 3);
  ASSERT_TRUE(got.isOk()) << got.status().message();
  EXPECT_EQ(got.value(), (std::vector<Bytes>{a, empty, b}));

  auto refused = [&](const Bytes& bytes, int count, const std::string& says) {
    auto r = bf::decodeRound(bytes, count);
    EXPECT_EQ(r.status().code(), Code::kRemoteError) << says;
    EXPECT_NE(r.status().message().find(says), std::string::npos) << r.status().message();
  };
  refused(wire, 4, "description 3 of 4");                                 // one missing
  refused(Bytes(wire.begin(), wire.end() - 1), 3, "description 2 of 3");  // cut short
  Bytes extra = wire;
  extra.push_back(0);
  refused(extra, 3, "1 bytes after its 3 descriptions");
  Bytes huge(4 + 8, 0);
  const uint32_t tooLong = bf::kMaxDescription;
  std::memcpy(huge.data(), &tooLong, 4);
  refused(huge, 1, "description 0 of 1");
  refused(Bytes(bf::maxRoundBody(1) + 1, 0), 1, "for 1 descriptions");

  const Status why(Code::kInvalidUsage, "rank 3 was started with nranks=5");
  const Bytes failure = bf::encodeFailure(why);
  const Status back = bf::decodeFailure(failure.data(), failure.size());
  EXPECT_EQ(back.code(), Code::kInvalidUsage);
  EXPECT_EQ(back.message(), why.message());
  Bytes unknown = failure;
  unknown[0] = 0x7f;  // no code a failure carries: a remote error, with its reason
  EXPECT_EQ(bf::decodeFailure(unknown.data(), unknown.size()).code(), Code::kRemoteError);
  EXPECT_EQ(bf::decodeFailure(unknown.data(), 3).code(), Code::kRemoteError);
  const Bytes abort = bf::encodeAbort(Bytes(bf::kMaxDescription + 10, 'x'));
  EXPECT_EQ(abort.size(), 8 + bf::kMaxDescription);  // cut to what a reader accepts
}

TEST(BootstrapAllGather, EveryRankGetsEveryDescriptionInOrder) {
  for (int n : {1, 2, 3, 5, 7, 8, 16, 33}) {
    MemoryStore store;
    auto out = exchange(n, store, 20000);
    for (int r = 0; r < n; ++r) {
      const auto& got = out[static_cast<size_t>(r)].got;
      ASSERT_TRUE(got.isOk()) << "n=" << n << " rank " << r << ": " << got.status().toString();
      ASSERT_EQ(got.value().size(), static_cast<size_t>(n));
      for (int k = 0; k < n; ++k) EXPECT_EQ(got.value()[static_cast<size_t>(k)], describe(k)) << "n=" << n;
    }
    // The store holds the addresses alone: a few dozen bytes each, not the descriptions.
    for (int r = 0; r < n && n > 1; ++r) {
      auto key = store.tryGet("boot." + std::to_string(r));
      ASSERT_TRUE(key.isOk());
      EXPECT_LT(key.value().size(), 64u);
    }
  }
}

TEST(BootstrapAllGather, ARankWithAnotherNranksFailsEveryRankNamingIt) {
  MemoryStore store;
  auto out = exchange(4, store, 30000, {4, 4, 5, 4});
  for (int r = 0; r < 4; ++r) {
    const auto& o = out[static_cast<size_t>(r)];
    ASSERT_FALSE(o.got.isOk()) << "rank " << r;
    EXPECT_EQ(o.got.status().code(), Code::kInvalidUsage) << o.got.status().toString();
    EXPECT_NE(o.got.status().message().find("nranks=5"), std::string::npos) << o.got.status().toString();
    EXPECT_LT(o.seconds, 10.0) << "rank " << r << " waited for the deadline";
  }
}

TEST(BootstrapAllGather, ARankThatGivesUpFailsEveryRankWithItsReason) {
  MemoryStore store;
  std::atomic<bool> no{false}, yes{true};
  auto out = exchange(5, store, 30000, {}, {&no, &no, &yes, &no, &no});
  for (int r = 0; r < 5; ++r) {
    const auto& o = out[static_cast<size_t>(r)];
    ASSERT_FALSE(o.got.isOk()) << "rank " << r;
    EXPECT_NE(o.got.status().message().find("rank 2"), std::string::npos) << o.got.status().toString();
    EXPECT_LT(o.seconds, 10.0) << "rank " << r;
  }
}

TEST(BootstrapAllGather, ALateRankIsWaitedForAndAMissingOneTimesOut) {
  MemoryStore store;
  std::vector<Outcome> out(3);
  std::thread late([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(700));
    BootstrapExchange x;
    x.store = &store, x.rank = 2, x.nranks = 3, x.key[0] = 7, x.ifname = "lo", x.timeoutMs = 20000;
    out[2].got = bootstrapAllGather(x, describe(2));
  });
  std::vector<std::thread> early;
  for (int r = 0; r < 2; ++r)
    early.emplace_back([&, r] {
      BootstrapExchange x;
      x.store = &store, x.rank = r, x.nranks = 3, x.key[0] = 7, x.ifname = "lo", x.timeoutMs = 20000;
      out[static_cast<size_t>(r)].got = bootstrapAllGather(x, describe(r));
    });
  late.join();
  for (auto& t : early) t.join();
  for (int r = 0; r < 3; ++r) ASSERT_TRUE(out[static_cast<size_t>(r)].got.isOk()) << r;

  MemoryStore alone;
  auto missing = exchange(2, alone, 1500, {3, 3});  // rank 2 of 3 never comes
  for (const Outcome& o : missing) {
    ASSERT_FALSE(o.got.isOk());
    EXPECT_EQ(o.got.status().code(), Code::kTimeout) << o.got.status().toString();
    EXPECT_NE(o.got.status().message().find("MYRIAD_INIT_TIMEOUT_MS"), std::string::npos);
  }
}

TEST(BootstrapAllGather, HostileConnectionsOnARingPortAreRefused) {
  MemoryStore store;
  std::vector<Outcome> out(3);
  std::vector<std::thread> threads;
  auto start = [&](int r) {
    threads.emplace_back([&, r] {
      BootstrapExchange x;
      x.store = &store, x.rank = r, x.nranks = 3, x.key[0] = 7, x.ifname = "lo", x.timeoutMs = 20000;
      out[static_cast<size_t>(r)].got = bootstrapAllGather(x, describe(r));
    });
  };
  start(0);
  start(1);
  // Rank 0 listens and waits for rank 2 (round 1) and rank 1 (round 0): bytes of no hello, then a hello of
  // another key.
  auto addr = store.get("boot.0", 5000, nullptr);
  ASSERT_TRUE(addr.isOk());
  Reader rd(addr.value());
  rd.i32();
  auto where = SockAddr::parse(rd.str(256));
  ASSERT_TRUE(where.isOk());
  for (int attempt = 0; attempt < 2; ++attempt) {
    auto fd = connectTo(where.value(), Clock::now() + std::chrono::seconds(5), nullptr);
    ASSERT_TRUE(fd.isOk());
    Fd sock(fd.value());
    if (attempt == 0) {
      const char junk[] = "GET / HTTP/1.0\r\n\r\n";
      ASSERT_GT(::send(sock.get(), junk, sizeof junk, MSG_NOSIGNAL), 0);
    } else {
      auth::Key wrong{};
      wrong[0] = 8;
      Handshake h(Handshake::Role::kOpener, wrong, HelloIdent{'B'});  // (the ident is checked after the key)
      EXPECT_FALSE(h.run(sock.get(), Clock::now() + std::chrono::seconds(2), nullptr).isOk());
    }
  }
  start(2);
  for (auto& t : threads) t.join();
  for (int r = 0; r < 3; ++r) {
    ASSERT_TRUE(out[static_cast<size_t>(r)].got.isOk())
        << r << ": " << out[static_cast<size_t>(r)].got.status().toString();
    EXPECT_EQ(out[static_cast<size_t>(r)].got.value()[2], describe(2));
  }
}

// A second process started as a rank that already joined is refused at once (usage), and the first one's
// exchange goes on.
TEST(BootstrapAllGather, ASecondProcessAsTheSameRankIsRefused) {
  MemoryStore store;
  auto exchangeAs = [&](int rank) {
    BootstrapExchange x;
    x.store = &store, x.rank = rank, x.nranks = 2, x.key[0] = 7, x.ifname = "lo", x.timeoutMs = 20000;
    return bootstrapAllGather(x, describe(rank));
  };
  Result<std::vector<Bytes>> first = Status(Code::kInternalError, "not run");
  std::thread a([&] { first = exchangeAs(0); });
  ASSERT_TRUE(store.get("boot.0", 5000, nullptr).isOk());
  auto twin = exchangeAs(0);
  ASSERT_FALSE(twin.isOk());
  EXPECT_FALSE(store.tryGet("boot.abort").isOk()) << "the refused twin told the communicator to give up";
  std::this_thread::sleep_for(std::chrono::milliseconds(300));  // past the members' first look at the store
  EXPECT_EQ(twin.status().code(), Code::kInvalidUsage) << twin.status().toString();
  EXPECT_NE(twin.status().message().find("already joined as rank 0"), std::string::npos);
  auto second = exchangeAs(1);
  a.join();
  ASSERT_TRUE(first.isOk()) << first.status().toString();
  ASSERT_TRUE(second.isOk()) << second.status().toString();
  EXPECT_EQ(second.value()[0], describe(0));
}

}  // namespace
}  // namespace myriad
