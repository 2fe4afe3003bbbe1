// The deterministic executor must fail, not hang, on a broken plan: a send nobody receives, a receive nobody
// sends, two ranks that add their messages in different orders, a cycle of waits, a rank planned with another
// count, a send buffer overwritten while in flight. Each error names the rank (and the peer). Also: one seed
// replays the same run event for event.
#include <gtest/gtest.h>

#include <cstring>

#include "dispatch/registry.h"
#include "tests/algo/harness.h"
#include "tests/sim/det_executor.h"

namespace myriad::sim {
namespace {

using test::testSeed;

// n ranks, each with a (small) send and receive buffer.
struct Fixture {
  explicit Fixture(int n) : send(static_cast<size_t>(n), std::vector<uint8_t>(64, 7)), recv(send) {}
  std::vector<RankCall> calls(std::vector<Schedule> schedules) {
    std::vector<RankCall> out;
    for (size_t r = 0; r < schedules.size(); ++r) {
      CollArgs a;
      a.sendbuff = send[r].data(), a.recvbuff = recv[r].data(), a.count = 16;
      out.push_back({std::move(schedules[r]), a});
    }
    return out;
  }
  std::vector<std::vector<uint8_t>> send, recv;
};

SimOptions options(uint64_t seed, int rendezvousPercent) {
  SimOptions o;
  o.seed = seed;
  o.rendezvousPercent = rendezvousPercent;
  return o;
}

std::string where(uint64_t seed) {
  return "seed " + std::to_string(seed) + " (rerun with MYRIAD_TEST_SEED=" + std::to_string(seed) + ")";
}

std::string runFault(std::vector<Schedule> schedules, uint64_t seed, int rendezvousPercent) {
  Fixture f(static_cast<int>(schedules.size()));
  DeterministicExecutor exec(static_cast<int>(schedules.size()), options(seed, rendezvousPercent));
  auto calls = f.calls(std::move(schedules));
  Status s = exec.run(calls);
  return s.isOk() ? "" : s.message();
}

TEST(SimFaults, SendWithoutReceiveIsReportedNotHung) {
  uint64_t seed = testSeed();
  for (int rdv : {0, 100}) {
    Schedule a("planted"), b("planted");
    a.send(1, Schedule::sendBuf(), 4);
    std::string err = runFault({std::move(a), std::move(b)}, seed, rdv);
    SCOPED_TRACE(err);
    EXPECT_NE(err.find("rank 0 -> rank 1: 1 message(s) not received"), std::string::npos) << where(seed);
    if (rdv) {
      EXPECT_NE(err.find("rank 0: planted: 0 of 1 steps done"), std::string::npos) << where(seed);
      EXPECT_NE(err.find("step 0 send to rank 1 (4 B): posted, not done"), std::string::npos) << where(seed);
    }
  }
}

TEST(SimFaults, ReceiveWithoutSendIsADeadlock) {
  uint64_t seed = testSeed();
  Schedule a("planted"), b("planted");
  b.recv(0, Schedule::recvBuf(), 4);
  std::string err = runFault({std::move(a), std::move(b)}, seed, 50);
  SCOPED_TRACE(err);
  EXPECT_NE(err.find("deadlock"), std::string::npos) << where(seed);
  EXPECT_NE(err.find("rank 1: planted: 0 of 1 steps done"), std::string::npos) << where(seed);
  EXPECT_NE(err.find("step 0 recv from rank 0 (4 B): posted, not done"), std::string::npos) << where(seed);
  EXPECT_EQ(err.find("rank 0: "), std::string::npos) << "rank 0 finished; " << where(seed);
}

TEST(SimFaults, MessagesAddedInDifferentOrdersAreAMismatchNamingThePeer) {
  uint64_t seed = testSeed();
  Schedule a("planted"), b("planted");
  a.send(1, Schedule::sendBuf(), 4);
  a.send(1, Schedule::sendBuf(), 8);
  b.recv(0, Schedule::recvBuf(), 8);
  b.recv(0, Schedule::recvBuf() + 8, 4);
  std::string err = runFault({std::move(a), std::move(b)}, seed, 50);
  EXPECT_NE(err.find("rank 1: sim: message from rank 0 to rank 1 does not match this rank's call: got 4 bytes"),
            std::string::npos)
      << err << "\n"
      << where(seed);
}

TEST(SimFaults, CycleOfWaitsIsADeadlockNamingBothRanks) {
  uint64_t seed = testSeed();
  std::vector<Schedule> s;
  for (int r = 0; r < 2; ++r) {
    s.emplace_back("planted");
    Schedule::Step got = s.back().recv(1 - r, Schedule::recvBuf(), 4);
    s.back().send(1 - r, Schedule::sendBuf(), 4, {got});
  }
  std::string err = runFault(std::move(s), seed, 50);
  SCOPED_TRACE(err);
  EXPECT_NE(err.find("deadlock"), std::string::npos) << where(seed);
  for (int r = 0; r < 2; ++r) {
    std::string peer = std::to_string(1 - r);
    EXPECT_NE(err.find("rank " + std::to_string(r) + ": planted: 0 of 2 steps done"), std::string::npos);
    EXPECT_NE(err.find("step 1 send to rank " + peer + " (4 B): not posted, waits for step 0 recv from rank " + peer),
              std::string::npos)
        << where(seed);
  }
  EXPECT_NE(err.find("no message waits to be received"), std::string::npos) << where(seed);
}

// A real plan, one rank planned for another count: the first message it exchanges does not match.
TEST(SimFaults, RankWithAnotherCountIsAMismatch) {
  uint64_t seed = testSeed();
  const int n = 4;
  auto layout = HostLayout::single(n);
  std::vector<std::vector<float>> send(n, std::vector<float>(64, 1.0f)), recv(send);
  std::vector<RankCall> calls;
  for (int r = 0; r < n; ++r) {
    CollArgs a;
    a.kind = CollKind::kAllReduce, a.sendbuff = send[static_cast<size_t>(r)].data();
    a.recvbuff = recv[static_cast<size_t>(r)].data(), a.count = r == 2 ? 60 : 64;
    auto plan = findAlgorithm("allreduce.ring")->plan(a, CommView{r, layout});
    ASSERT_TRUE(plan.isOk());
    calls.push_back({plan.take(), a});
  }
  DeterministicExecutor exec(n, options(seed, 50));
  Status s = exec.run(calls);
  EXPECT_FALSE(s.isOk()) << where(seed);
  EXPECT_NE(s.message().find("does not match this rank's call"), std::string::npos) << s.message() << where(seed);
  EXPECT_TRUE(s.message().find("rank 2") != std::string::npos) << s.message() << where(seed);
}

// rank 0 sends from recvbuff and, once rank 1's reply is in, overwrites recvbuff without waiting for its
// own send: whenever the reply wins the race, the executor sees the send's bytes change before it is done.
TEST(SimFaults, SendBufferOverwrittenInFlightIsCaughtOnSomeSeed) {
  uint64_t seed = testSeed();
  int caught = 0, ok = 0;
  for (uint64_t k = 0; k < 40; ++k) {
    Schedule a("planted"), b("planted");
    a.send(1, Schedule::recvBuf(), 16);
    Schedule::Step got = a.recv(1, Schedule::recvBuf() + 32, 4);
    a.copy(Schedule::recvBuf(), Schedule::sendBuf() + 8, 16, {got});
    b.recv(0, Schedule::recvBuf(), 16);
    b.send(0, Schedule::sendBuf(), 4);
    Fixture f(2);
    for (size_t i = 0; i < 64; ++i) f.send[0][i] = static_cast<uint8_t>(i);
    DeterministicExecutor exec(2, options(seed + k, 50));
    auto calls = f.calls({std::move(a), std::move(b)});
    Status s = exec.run(calls);
    if (s.isOk()) {
      ++ok;
      continue;
    }
    EXPECT_NE(s.message().find("rank 0 changed the buffer of its send to rank 1"), std::string::npos)
        << s.message() << where(seed + k);
    ++caught;
  }
  EXPECT_GT(caught, 0) << "40 seeds from " << seed;
  std::cout << "[ outcome  ] overwritten send buffer caught on " << caught << " of 40 seeds, passed unseen on " << ok
            << "\n";
}

TEST(SimReplay, OneSeedReplaysTheSameRun) {
  uint64_t seed = testSeed();
  const int n = 7;
  auto layout = HostLayout::single(n);
  auto once = [&](uint64_t s) {
    std::vector<std::vector<float>> send(n, std::vector<float>(1009, 1.0f)), recv(send);
    std::vector<RankCall> calls;
    for (int r = 0; r < n; ++r) {
      CollArgs a;
      a.kind = CollKind::kAllReduce, a.sendbuff = send[static_cast<size_t>(r)].data();
      a.recvbuff = recv[static_cast<size_t>(r)].data(), a.count = 1009;
      calls.push_back({findAlgorithm("allreduce.tree")->plan(a, CommView{r, layout, nullptr, 256}).take(), a});
    }
    DeterministicExecutor exec(n, options(s, 50));
    RunStats stats;
    Status st = exec.run(calls, &stats);
    EXPECT_TRUE(st.isOk()) << st.message() << where(s);
    return std::make_pair(exec.fabric().eventHash(), stats.rounds);
  };
  auto a = once(seed), b = once(seed), c = once(seed + 1);
  EXPECT_EQ(a, b) << where(seed);
  EXPECT_NE(a.first, c.first) << "seeds " << seed << " and " << seed + 1 << " ran alike";
}

}  // namespace
}  // namespace myriad::sim
