// The simulator's compact plans (tools/sim/plan_set.h) and its windows of per-step state (window.h): a
// PlanSet must give back every rank's kind, peer, size and dependencies of every step exactly as the
// algorithm planned them, share a shape only between equal plans, and a run must hold state for the steps
// in flight only. Also the cost of a receive-reduce's reduction (its bytes read twice and written once).
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "plan/dtype.h"
#include "tools/sim/fabric.h"
#include "tools/sim/plan_call.h"
#include "tools/sim/plan_set.h"
#include "tools/sim/virtual_executor.h"
#include "tools/sim/window.h"

namespace myriad::netsim {
namespace {

TEST(NetsimWindow, EntriesSurviveGrowthAcrossTheWrapAndLeaveFromTheFront) {
  Window<int> w(-1);
  std::vector<int> ref;  // ref[i - base]
  uint64_t base = 0;
  for (int round = 0; round < 50; ++round) {
    // Touch a few entries ahead (growing the span across the ring's wrap), then drop some from the front.
    const uint64_t far = base + static_cast<uint64_t>(round % 7) * 3 + 1;
    for (uint64_t i = base; i <= far; i += 2) {
      w.at(i) = static_cast<int>(i * 10);
      if (ref.size() <= i - base) ref.resize(i - base + 1, -1);
      ref[i - base] = static_cast<int>(i * 10);
    }
    ASSERT_EQ(w.span(), ref.size());
    for (size_t k = 0; k < ref.size(); ++k) ASSERT_EQ(*w.find(base + k), ref[k]) << "round " << round;
    EXPECT_EQ(w.find(base + ref.size()), nullptr);
    const size_t drop = std::min<size_t>(ref.size(), static_cast<size_t>(round % 4) + 1);
    for (size_t k = 0; k < drop; ++k) {
      EXPECT_EQ(w.front(), ref[k]);
      w.popFront();
    }
    ref.erase(ref.begin(), ref.begin() + static_cast<long>(drop));
    base += drop;
    EXPECT_EQ(w.base(), base);
    if (base > 0) {
      EXPECT_EQ(w.find(base - 1), nullptr);
    }
  }
  // An entry created past the end after pops starts at the fill value, not a stale one.
  w.at(w.base() + w.span() + 2);
  EXPECT_EQ(*w.find(w.base() + w.span() - 1), -1);
}

// Every rank's Schedule planned by the library, for a call of `count` floats per rank.
std::vector<Schedule> planEvery(CollKind kind, const std::string& algo, size_t count, int n, int perHost) {
  CallSpec call;
  call.kind = kind, call.algo = algo, call.nranks = n, call.ranksPerHost = perHost;
  call.bytes = count * sizeof(float) * (kind == CollKind::kAllToAll ? static_cast<size_t>(n) : 1);
  std::vector<Schedule> out;
  auto name = planEachRank(call, [&](int, const Schedule& s) {
    out.push_back(s);
    return Status::ok();
  });
  EXPECT_TRUE(name.isOk()) << name.status().toString();
  return out;
}

// The PlanSet's view of rank r against the Schedule itself, step by step.
void expectSame(const PlanSet& set, int r, const Schedule& plan) {
  const PlanShape& s = set.shape(r);
  ASSERT_EQ(s.size(), plan.size()) << "rank " << r;
  std::vector<std::vector<int32_t>> after(plan.size());
  for (size_t i = 0; i < plan.size(); ++i) {
    const Schedule::StepInfo& st = plan.steps()[i];
    ASSERT_EQ(s.kind[i], st.kind) << "rank " << r << " step " << i;
    const bool elements = st.kind == Schedule::Kind::kReduce || st.kind == Schedule::Kind::kScale;
    ASSERT_EQ(s.bytes[i], elements ? st.n * dtypeSize(st.dtype) : st.n) << "rank " << r << " step " << i;
    if (Schedule::isMessage(st.kind)) {
      ASSERT_EQ(set.peer(r, s.slot[i]), st.peer) << "rank " << r << " step " << i;
    }
    const auto deps = plan.deps(static_cast<Schedule::Step>(i));
    ASSERT_EQ(s.numDeps[i], deps.size()) << "rank " << r << " step " << i;
    for (Schedule::Step d : deps) after[static_cast<size_t>(d)].push_back(static_cast<int32_t>(i));
  }
  for (size_t i = 0; i < plan.size(); ++i) {
    std::vector<int32_t> got(s.after.begin() + s.afterAt[i], s.after.begin() + s.afterAt[i + 1]);
    ASSERT_EQ(got, after[i]) << "rank " << r << ": the steps step " << i << " unblocks";
  }
}

TEST(NetsimPlanSet, EveryRankReadsBackItsOwnPlanAndEqualPlansShareOneShape) {
  struct Case {
    CollKind kind;
    const char* algo;
    size_t count;
    int n, perHost;
    size_t maxShapes;  // at most this many distinct shapes (0: no bound checked)
  };
  const Case cases[] = {
      {CollKind::kAllReduce, "allreduce.ring", 1 << 20, 16, 4, 1},        // equal segments: one shape
      {CollKind::kAllReduce, "allreduce.ring", (1 << 20) + 5, 16, 4, 0},  // unequal segments
      {CollKind::kAllReduce, "allreduce.tree", 1 << 20, 16, 2, 0},
      {CollKind::kAllReduce, "allreduce.hier", 1 << 20, 16, 4, 0},
      {CollKind::kAllReduce, "allreduce.halving_doubling", 1 << 16, 12, 1, 0},
      {CollKind::kAllToAll, "alltoall.pairwise", 1 << 10, 8, 2, 0},
      {CollKind::kBroadcast, "broadcast.tree", 1 << 18, 9, 3, 0},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(std::string(c.algo) + " count " + std::to_string(c.count));
    auto plans = planEvery(c.kind, c.algo, c.count, c.n, c.perHost);
    ASSERT_EQ(plans.size(), static_cast<size_t>(c.n));
    auto set = PlanSet::of(plans);
    ASSERT_TRUE(set.isOk()) << set.status().toString();
    EXPECT_EQ(set.value().nranks(), c.n);
    uint64_t steps = 0;
    for (int r = 0; r < c.n; ++r) {
      expectSame(set.value(), r, plans[static_cast<size_t>(r)]);
      steps += plans[static_cast<size_t>(r)].size();
    }
    EXPECT_EQ(set.value().steps(), steps);
    if (c.maxShapes) {
      EXPECT_LE(set.value().shapes(), c.maxShapes);
    }
  }
}

TEST(NetsimPlanSet, APlanThatMessagesItselfOrNoRankIsRefusedByName) {
  std::vector<Schedule> self(2);
  self[0].recv(1, Schedule::recvBuf(), 64);
  self[1].send(1, Schedule::sendBuf(), 64);
  auto a = PlanSet::of(self);
  ASSERT_FALSE(a.isOk());
  EXPECT_NE(a.status().message().find("rank 1 step 0 names peer 1"), std::string::npos) << a.status().toString();
  std::vector<Schedule> none(2);
  none[0].send(7, Schedule::sendBuf(), 64);
  auto b = PlanSet::of(none);
  ASSERT_FALSE(b.isOk());
  EXPECT_NE(b.status().message().find("rank 0 step 0 names peer 7"), std::string::npos) << b.status().toString();
}

// Planning one rank per plan class (Algorithm::planClass) must give every rank exactly the plan the algorithm
// makes for it: checked here on every rank, against each rank planned in full.
TEST(NetsimPlanSet, PlanClassesGiveEveryRankExactlyItsOwnPlan) {
  struct Case {
    std::string algo;
    int n, perHost;
    size_t count;
    bool classed;  // whether the algorithm names classes for this call
  };
  const Case cases[] = {
      {"allreduce.ring", 24, 3, 24 * 1000, true},  {"allreduce.ring", 24, 3, 24 * 1000 + 5, false},
      {"allreduce.tree", 37, 1, 300000, true},     {"allreduce.tree", 64, 8, 1 << 18, true},
      {"allreduce.hier", 24, 4, 24 * 20000, true}, {"allreduce.hier", 24, 4, 24 * 20000 + 4, false},
      {"allreduce.hier", 30, 5, 30 * 12345, true},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.algo + ", " + std::to_string(c.n) + " ranks, " + std::to_string(c.count) + " floats");
    CallSpec call;
    call.kind = CollKind::kAllReduce, call.algo = c.algo, call.nranks = c.n, call.ranksPerHost = c.perHost;
    call.bytes = c.count * sizeof(float);
    auto byClass = planCall(call, true);
    ASSERT_TRUE(byClass.isOk()) << byClass.status().toString();
    PlannedCall& p = byClass.value();
    std::vector<Schedule> full = planEvery(CollKind::kAllReduce, c.algo, c.count, c.n, c.perHost);
    ASSERT_EQ(full.size(), static_cast<size_t>(c.n));
    for (int r = 0; r < c.n; ++r) {
      Status same = p.plans.check(r, full[static_cast<size_t>(r)], c.n);
      EXPECT_TRUE(same.isOk()) << same.toString();
    }
    EXPECT_EQ(p.planned + p.moved, c.n);
    if (c.classed) {
      EXPECT_GT(p.moved, c.n / 2);
      EXPECT_GT(p.checked, 0);
    } else {
      EXPECT_EQ(p.moved, 0);  // unequal segments: every rank's sizes come in its own order
    }
  }
}

// A rank moved from another whose plan is not its own is caught by check, with the rank named.
TEST(NetsimPlanSet, ACheckCatchesAMovedPlanThatIsNotTheRanksOwn) {
  std::vector<Schedule> ring = planEvery(CollKind::kAllReduce, "allreduce.ring", 4000, 8, 1);
  std::vector<Schedule> tree = planEvery(CollKind::kAllReduce, "allreduce.tree", 4000, 8, 1);
  PlanSet set;
  ASSERT_TRUE(set.add(ring[0], 8).isOk());
  set.addMoved(0, 8);
  EXPECT_TRUE(set.check(1, ring[1], 8).isOk());
  Status wrong = set.check(1, tree[1], 8);
  EXPECT_FALSE(wrong.isOk());
  EXPECT_NE(wrong.toString().find("rank 1"), std::string::npos) << wrong.toString();
  // Moved by the wrong distance: rank 1 given rank 0's peers moved by 2 (3 and 1), not its own (2 and 0).
  PlanSet off;
  ASSERT_TRUE(off.add(ring[0], 8).isOk());
  ASSERT_TRUE(off.add(ring[1], 8).isOk());
  off.addMoved(0, 8);  // rank 2 as rank 0 moved by 2: its own plan
  EXPECT_TRUE(off.check(2, ring[2], 8).isOk());
  EXPECT_FALSE(off.check(2, ring[4], 8).isOk());
}

// A rank that posts all its sends at once (as a tree leaf does) to a peer that takes them one after the
// other: the connection holds state for the messages in the socket buffers and on the wire (8 MiB: 128 of
// these 64 KiB messages), not for all 2,000 posted; the call still takes the wire time of every byte.
TEST(NetsimRun, SendsPostedAllAtOnceHoldStateOnlyForTheBuffers) {
  FabricSpec spec;
  spec.nranks = 2, spec.hostsPerLeaf = 2, spec.spines = 1;
  auto fabric = Fabric::make(spec);
  ASSERT_TRUE(fabric.isOk());
  constexpr int kMessages = 2000;
  constexpr size_t kBytes = size_t{64} << 10;
  std::vector<Schedule> plans(2);
  Schedule::Step last{};
  for (int k = 0; k < kMessages; ++k) {
    plans[0].send(1, Schedule::sendBuf(), kBytes);
    last =
        k == 0 ? plans[1].recv(0, Schedule::recvBuf(), kBytes) : plans[1].recv(0, Schedule::recvBuf(), kBytes, {last});
  }
  auto res = VirtualExecutor(fabric.value(), 1).run(plans);
  ASSERT_TRUE(res.isOk()) << res.status().toString();
  EXPECT_LE(res.value().messageWindow, 256u);
  EXPECT_GE(res.value().seconds, kMessages * static_cast<double>(kBytes) / spec.nicBytesPerSec);
  EXPECT_EQ(res.value().messages, static_cast<uint64_t>(kMessages));
}

TEST(NetsimRun, ARingHoldsStateForTheStepsInFlightNotForItsWholePlan) {
  const int n = 32;
  FabricSpec spec;
  spec.nranks = n, spec.ranksPerHost = 4, spec.hostsPerLeaf = 2, spec.spines = 2;
  auto fabric = Fabric::make(spec);
  ASSERT_TRUE(fabric.isOk());
  CallSpec call;
  call.kind = CollKind::kAllReduce, call.bytes = size_t{64} << 20, call.nranks = n, call.ranksPerHost = 4;
  call.algo = "allreduce.ring";
  auto planned = planCall(call);
  ASSERT_TRUE(planned.isOk()) << planned.status().toString();
  const PlanSet& plans = planned.value().plans;
  EXPECT_EQ(plans.shapes(), 1u);  // 64 MiB over 32 ranks: equal segments, every rank the same shape
  const size_t perRank = plans.shape(0).size();
  ASSERT_GT(perRank, 1000u);
  auto res = VirtualExecutor(fabric.value(), 1).run(plans);
  ASSERT_TRUE(res.isOk()) << res.status().toString();
  // The ring keeps 4 messages in flight per direction: its window of steps is a few dozen (held as a power of
  // two), not thousands.
  // A connection's messages may run ahead of their receives by the socket buffers (8 MiB: 128 of this
  // ring's 64 KiB slices), and no further.
  EXPECT_LE(res.value().stepWindow, 128u) << "of " << perRank << " steps per rank";
  EXPECT_LE(res.value().messageWindow, 256u);
  EXPECT_GT(res.value().stepWindow, 0u);
}

// Rank 0 sends B bytes that rank 1 receives and reduces into its buffer: the receive finishes after the
// wire, the latency and the reduction, which reads the message and the buffer and writes the buffer
// (3B bytes of memory traffic: B is the message's size in bytes, not in elements).
TEST(NetsimRun, AReceiveReduceCostsThreeTimesItsBytesOfMemoryTraffic) {
  FabricSpec spec;
  spec.nranks = 2, spec.hostsPerLeaf = 2, spec.spines = 1;
  spec.memBytesPerSec = 1e9;  // slow memory: the reduction dominates
  auto fabric = Fabric::make(spec);
  ASSERT_TRUE(fabric.isOk());
  const size_t bytes = size_t{1} << 20;
  std::vector<Schedule> plans(2);
  plans[0].send(1, Schedule::sendBuf(), bytes);
  plans[1].recvReduce(0, Schedule::recvBuf(), Schedule::recvBuf(), Schedule::recvBuf(), bytes / sizeof(float),
                      myrFloat32, myrSum);
  auto res = VirtualExecutor(fabric.value(), 1).run(plans);
  ASSERT_TRUE(res.isOk()) << res.status().toString();
  const double wire = static_cast<double>(bytes) / spec.nicBytesPerSec + 2 * spec.linkLatency;
  const double expected = wire + 3.0 * static_cast<double>(bytes) / spec.memBytesPerSec;
  EXPECT_NEAR(res.value().seconds, expected, 1e-3 * expected)
      << "simulated " << res.value().seconds * 1e6 << " us, expected " << expected * 1e6 << " us";
}

}  // namespace
}  // namespace myriad::netsim
