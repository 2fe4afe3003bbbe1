// Steady-state extrapolation (tools/sim/periodic.h, steady.h): the periodic regions of real plans, cut
// plans that keep every step's dependencies, and runs cut short whose extrapolation matches the full run.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <numeric>
#include <optional>
#include <string>
#include <vector>

#include "tools/sim/fabric.h"
#include "tools/sim/grid.h"
#include "tools/sim/periodic.h"
#include "tools/sim/plan_call.h"
#include "tools/sim/steady.h"
#include "tools/sim/virtual_executor.h"

namespace myriad::netsim {
namespace {

PlanSet plansOf(const std::string& algo, int n, int perHost, size_t bytes) {
  CallSpec call;
  call.kind = CollKind::kAllReduce, call.algo = algo, call.nranks = n, call.ranksPerHost = perHost;
  call.bytes = bytes;
  auto planned = planCall(call);
  EXPECT_TRUE(planned.isOk()) << planned.status().toString();
  return planned.isOk() ? std::move(planned.value().plans) : PlanSet();
}

// A ring all-reduce of 128 ranks, one slice per segment: its reduce-scatter is one region of (receive-reduce,
// send) blocks, and a cut removes whole blocks while every kept step keeps its kind, peer, size and number of
// dependencies, and each dependency into the cut lands on the step one cut further on.
TEST(NetsimPeriodic, ARingsRoundsAreARegionAndACutKeepsEveryKeptStepAsItWas) {
  PlanSet plans = plansOf("allreduce.ring", 128, 1, 128 * 4096);
  ASSERT_EQ(plans.shapes(), 1u);
  const PlanShape& shape = plans.shapeAt(0);
  std::vector<PeriodicRegion> regions = periodicRegions(shape, 128);
  ASSERT_FALSE(regions.empty());
  const PeriodicRegion& r = regions.front();
  EXPECT_GE(r.blocks * r.period, 200u);  // 127 rounds of 2 steps, less the first few (no window yet)
  // Every step of the region is the step one period on, field by field.
  for (size_t i = r.start; i + r.period < r.end(); ++i) {
    ASSERT_EQ(shape.kind[i], shape.kind[i + r.period]) << i;
    ASSERT_EQ(shape.slot[i], shape.slot[i + r.period]) << i;
    ASSERT_EQ(shape.bytes[i], shape.bytes[i + r.period]) << i;
  }
  const BlockCut cut{r, r.blocks - 2 * r.margin() - 2, r.margin(), 0};
  ASSERT_GE(cut.blocks, r.margin());
  PlanShape cutShapeOut = cutShape(shape, {cut});
  ASSERT_EQ(cutShapeOut.size(), shape.size() - cut.blocks * r.period);
  // Kept steps, before and after the cut, as they were.
  for (size_t i = 0; i < shape.size(); ++i) {
    if (i >= cut.from() && i < cut.to()) continue;
    const size_t c = i < cut.from() ? i : i - (cut.to() - cut.from());
    ASSERT_EQ(cutShapeOut.kind[c], shape.kind[i]) << i;
    ASSERT_EQ(cutShapeOut.slot[c], shape.slot[i]) << i;
    ASSERT_EQ(cutShapeOut.bytes[c], shape.bytes[i]) << i;
    ASSERT_EQ(cutShapeOut.numDeps[c], shape.numDeps[i]) << i;
  }
  // Sends and receives per peer drop by the same number (both ends of the ring agree).
  const size_t before = shape.sendsTo[0].size() + shape.recvsFrom[0].size();
  const size_t after = cutShapeOut.sendsTo[0].size() + cutShapeOut.recvsFrom[0].size();
  EXPECT_EQ(before - after, removedMessages(shape, cut, 0, true).last - removedMessages(shape, cut, 0, true).first +
                                removedMessages(shape, cut, 0, false).last -
                                removedMessages(shape, cut, 0, false).first);
}

// A 1 GiB hier all-reduce over 32 hosts of 8: its intra-host reduce-scatter (16 passes of 7 rounds of 64
// slices, a join after each pass) and all-gather (7 rounds of 1,024 slices) are grids of rows (rounds) and
// columns (slices). Removing the same columns from every row keeps every kept step as it was, with its number
// of dependencies (joins aside: they wait for the steps left), and leaves the same phase over fewer slices:
// the cut shape's all-gather is again a grid, of as many rows and the columns kept.
TEST(NetsimGrid, HierRoundsAreGridsAndAColumnCutLeavesTheSamePhaseOverFewerSlices) {
  PlanSet plans = plansOf("allreduce.hier", 256, 8, size_t{1} << 30);
  ASSERT_GT(plans.shapes(), 0u);
  const PlanShape& shape = plans.shapeAt(0);
  std::vector<Grid> grids;  // around each region (the reduce-scatter's first rounds are regions of their own)
  for (const PeriodicRegion& r : periodicRegions(shape, 128))
    if (std::optional<Grid> g = gridAround(shape, r)) grids.push_back(*g);
  ASSERT_FALSE(grids.empty());
  const size_t laneBytes = (size_t{1} << 30) / 8;
  auto bytesPerRow = [&](const Grid& g) { return g.columns * shape.bytes[g.start()]; };
  // The all-gather has the longest rows; the reduce-scatter the most rows from the plan's first step.
  auto allGather =
      std::max_element(grids.begin(), grids.end(), [](const Grid& a, const Grid& b) { return a.columns < b.columns; });
  auto reduceScatter = std::max_element(grids.begin(), grids.end(), [](const Grid& a, const Grid& b) {
    return (a.start() == 0 ? a.rows.size() : 0) < (b.start() == 0 ? b.rows.size() : 0);
  });
  EXPECT_EQ(allGather->rows.size(), 7u);
  EXPECT_EQ(bytesPerRow(*allGather), laneBytes);  // a round moves the whole lane block, slice by slice
  EXPECT_EQ(reduceScatter->start(), 0u);          // from the plan's first step, across the passes' joins
  EXPECT_EQ(reduceScatter->rows.size() % 7, 0u);
  EXPECT_EQ(bytesPerRow(*reduceScatter) * (reduceScatter->rows.size() / 7), laneBytes);
  for (const Grid* g : {&*allGather, &*reduceScatter}) {
    SCOPED_TRACE(std::to_string(g->rows.size()) + " rows of " + std::to_string(g->columns) + " columns");
    EXPECT_EQ(g->period, 2u);  // a slice: its send and its receive
    EXPECT_EQ(g->reach, 1u);
    const uint64_t removed = g->columns - 10;
    PlanShape cut = cutShape(shape, columnCuts(*g, removed, 3, 0));
    ASSERT_EQ(cut.size(), shape.size() - g->rows.size() * removed * g->period);
    // Kept steps in step order, beside their originals.
    std::vector<size_t> kept;
    for (size_t i = 0; i < shape.size(); ++i) {
      bool gone = false;
      for (size_t row : g->rows) {
        const size_t to = row + (g->columns - 3) * g->period;
        gone = gone || (i >= to - removed * g->period && i < to);
      }
      if (!gone) kept.push_back(i);
    }
    ASSERT_EQ(kept.size(), cut.size());
    for (size_t c = 0; c < kept.size(); ++c) {
      const size_t i = kept[c];
      ASSERT_EQ(cut.kind[c], shape.kind[i]) << i;
      ASSERT_EQ(cut.slot[c], shape.slot[i]) << i;
      ASSERT_EQ(cut.bytes[c], shape.bytes[i]) << i;
      if (shape.numDeps[i] <= kFarFanOut) {
        ASSERT_EQ(cut.numDeps[c], shape.numDeps[i]) << i;
      }
    }
    if (g == &*allGather) {
      const size_t at = static_cast<size_t>(std::lower_bound(kept.begin(), kept.end(), g->start()) - kept.begin());
      std::optional<Grid> again;
      for (const PeriodicRegion& r : periodicRegions(cut, 12))
        if (r.start >= at && !again) again = gridAround(cut, r);
      ASSERT_TRUE(again.has_value());
      EXPECT_EQ(again->start(), at);
      EXPECT_EQ(again->rows.size(), g->rows.size());
      EXPECT_EQ(again->columns, g->columns - removed);
    }
  }
}

double total(const std::vector<double>& v) {
  return std::accumulate(v.begin(), v.end(), 0.0);
}

// Ring, tree and hier all-reduce on a small leaf-spine fabric, with and without an elephant: the runs cut
// short and extrapolated give the full run's time within 0.5 % (each run in full is the reference), the
// same number of messages, and the same bytes on the links within 0.5 %.
TEST(NetsimSteady, CutRunsExtrapolateToTheFullRun) {
  struct Case {
    std::string algo;
    int n, perHost;
    size_t bytes;
    int paths = 1;
    PathPolicy policy = PathPolicy::kStatic;
  };
  const Case cases[] = {{"allreduce.ring", 512, 4, size_t{32} << 20},
                        {"allreduce.tree", 64, 4, size_t{64} << 20},
                        {"allreduce.hier", 1024, 2, size_t{8} << 20},
                        {"allreduce.hier", 64, 8, size_t{1} << 30},  // its rounds cut by columns (grid.h)
                        {"allreduce.ring", 256, 1, size_t{64} << 20, 4, PathPolicy::kAdaptive}};
  for (const Case& c : cases)
    for (bool elephant : {false, true}) {
      SCOPED_TRACE(c.algo + (c.policy == PathPolicy::kAdaptive ? ", adaptive" : "") +
                   (elephant ? " beside an elephant" : ""));
      FabricSpec spec;
      spec.nranks = c.n, spec.ranksPerHost = c.perHost, spec.hostsPerLeaf = 4, spec.spines = 4;
      auto fabric = Fabric::make(spec);
      ASSERT_TRUE(fabric.isOk());
      std::vector<Elephant> background;
      if (elephant) background.push_back(Elephant{{fabric.value().leafUp(0, 1), fabric.value().spineDown(1, 1)}});
      PlanSet plans = plansOf(c.algo, c.n, c.perHost, c.bytes);
      VirtualExecutor exec(fabric.value(), c.paths, background);
      exec.policy(c.policy);
      auto full = exec.run(plans);
      ASSERT_TRUE(full.isOk()) << full.status().toString();
      SteadyReport report;
      auto steady = runSteady(exec, plans, SteadyOptions{}, &report);
      ASSERT_TRUE(steady.isOk()) << steady.status().toString();
      ASSERT_TRUE(report.used) << report.why;
      if (c.perHost == 8) {  // rounds cut by columns, passes by blocks: pipelines, extrapolated exactly
        EXPECT_NE(report.shapes.find("rows of"), std::string::npos) << report.shapes;
        EXPECT_NEAR(steady.value().seconds, full.value().seconds, 1e-9 * full.value().seconds);
      }
      EXPECT_LT(report.steps, plans.steps()) << "cut runs should be shorter than the full plans";
      const double want = full.value().seconds, got = steady.value().seconds;
      EXPECT_NEAR(got, want, 0.005 * want)
          << "full " << want * 1e6 << " us, extrapolated " << got * 1e6 << " us, residual " << report.residual;
      EXPECT_EQ(steady.value().messages, full.value().messages);
      const double wantBytes = total(full.value().linkBytes), gotBytes = total(steady.value().linkBytes);
      EXPECT_NEAR(gotBytes, wantBytes, 0.005 * wantBytes);
      EXPECT_LT(std::abs(report.residual), 0.01);
    }
}

// A tolerance no run meets: the kept blocks double only while every run made stays below one full run's
// steps, and the last extrapolation comes back marked as not settled, still close to the full run.
TEST(NetsimSteady, UnsettledRunsNeverCostMoreThanTheFullRun) {
  FabricSpec spec;
  spec.nranks = 1024, spec.ranksPerHost = 1, spec.hostsPerLeaf = 4, spec.spines = 4;
  auto fabric = Fabric::make(spec);
  ASSERT_TRUE(fabric.isOk());
  std::vector<Elephant> background;
  for (int leaf = 0; leaf < fabric.value().leaves(); ++leaf)  // every leaf's spine-0 uplink shared
    background.push_back(
        Elephant{{fabric.value().leafUp(leaf, 0), fabric.value().spineDown(0, (leaf + 1) % fabric.value().leaves())}});
  PlanSet plans = plansOf("allreduce.ring", 1024, 1, size_t{16} << 20);  // 16 KiB segments: latency-bound
  VirtualExecutor exec(fabric.value(), 1, background);
  SteadyOptions never;
  never.settled = 1e-12;
  SteadyReport report;
  auto steady = runSteady(exec, plans, never, &report);
  ASSERT_TRUE(steady.isOk()) << steady.status().toString();
  ASSERT_TRUE(report.used) << report.why;
  EXPECT_FALSE(report.settled);
  EXPECT_GT(report.kept, 1u) << "a longer cut fitted and should have been tried";
  EXPECT_LE(report.steps, plans.steps()) << report.runs << " runs, kept x" << report.kept;
  auto full = exec.run(plans);
  ASSERT_TRUE(full.isOk());
  EXPECT_NEAR(steady.value().seconds, full.value().seconds, 0.02 * full.value().seconds);
}

// A round's runs made three at a time give exactly what one at a time gives (every run is its own state), and
// a run is made once: with one region, each round after the first adds two runs (its first is the round
// before's second); with more, k + 2.
TEST(NetsimSteady, RunsMadeAtOnceGiveExactlyWhatOneAtATimeGives) {
  struct Case {
    std::string algo;
    int n;
    size_t bytes;
  };
  for (const Case& c : {Case{"allreduce.tree", 64, size_t{128} << 20}, Case{"allreduce.ring", 512, size_t{32} << 20}}) {
    SCOPED_TRACE(c.algo);
    FabricSpec spec;
    spec.nranks = c.n, spec.ranksPerHost = 1, spec.hostsPerLeaf = 4, spec.spines = 4;
    auto fabric = Fabric::make(spec);
    ASSERT_TRUE(fabric.isOk());
    const std::vector<Elephant> background{Elephant{{fabric.value().leafUp(0, 1), fabric.value().spineDown(1, 1)}}};
    PlanSet plans = plansOf(c.algo, c.n, 1, c.bytes);
    VirtualExecutor exec(fabric.value(), 4, background);
    exec.policy(PathPolicy::kAdaptive);
    SteadyOptions one, three;
    three.threads = 3;
    one.settled = three.settled = 1e-12;  // never settles: as many rounds as the budget allows
    SteadyReport a, b;
    auto serial = runSteady(exec, plans, one, &a);
    auto parallel = runSteady(exec, plans, three, &b);
    ASSERT_TRUE(serial.isOk()) << serial.status().toString();
    ASSERT_TRUE(parallel.isOk()) << parallel.status().toString();
    ASSERT_TRUE(a.used) << a.why;
    EXPECT_EQ(serial.value().seconds, parallel.value().seconds);
    EXPECT_EQ(serial.value().rankFinish, parallel.value().rankFinish);
    EXPECT_EQ(serial.value().linkBytes, parallel.value().linkBytes);
    EXPECT_EQ(serial.value().repaths, parallel.value().repaths);
    EXPECT_EQ(a.residual, b.residual);
    EXPECT_EQ(a.kept, b.kept);
    EXPECT_EQ(a.runs, b.runs);
    EXPECT_EQ(a.steps, b.steps);
    EXPECT_EQ(a.first, b.first);
    int rounds = 0;
    for (uint64_t k = a.kept / a.first; k > 0; k /= 2) ++rounds;
    EXPECT_EQ(a.residuals.size(), static_cast<size_t>(rounds));
    if (c.algo == "allreduce.tree") {
      EXPECT_GT(rounds, 1) << "a longer cut fitted and should have been tried";
      // Its region's margin (the lag of a slice's way down behind its way up) is several times the base
      // blocks: the first round starts scaled up, keeping half a margin at least.
      EXPECT_GT(a.first, 1u) << a.shapes;
      unsigned long long blocks = 0, period = 0, margin = 0;
      ASSERT_EQ(std::sscanf(a.shapes.c_str(), "%llu blocks of %llu steps, margin %llu", &blocks, &period, &margin), 3)
          << a.shapes;
      const uint64_t base = std::max<uint64_t>(2, (one.baseSteps + period - 1) / period);
      EXPECT_GE(2 * base * a.first, margin) << a.shapes;
      EXPECT_LT(base * a.first, margin) << "the smallest such power of two: " << a.shapes;
    }
    EXPECT_EQ(a.runs, a.regions == 1 ? 1 + 2 * rounds : rounds * (a.regions + 2))
        << a.regions << " regions, kept x" << a.kept;
  }
}

// What a cut run would not reproduce (a link failing at a set time) is run in full, and says why.
TEST(NetsimSteady, TimeDependentRunsAreRunInFull) {
  FabricSpec spec;
  spec.nranks = 32, spec.ranksPerHost = 4, spec.hostsPerLeaf = 2, spec.spines = 2;
  auto fabric = Fabric::make(spec);
  ASSERT_TRUE(fabric.isOk());
  PlanSet plans = plansOf("allreduce.ring", 32, 4, size_t{4} << 20);
  VirtualExecutor exec(fabric.value(), 2);
  exec.failures({LinkFailure{{fabric.value().leafUp(0, 1), fabric.value().spineDown(1, 0)}, 1e-4, 0}});
  SteadyReport report;
  auto steady = runSteady(exec, plans, SteadyOptions{}, &report);
  ASSERT_TRUE(steady.isOk()) << steady.status().toString();
  EXPECT_FALSE(report.used);
  EXPECT_NE(report.why.find("failures"), std::string::npos) << report.why;
  auto full = exec.run(plans);
  ASSERT_TRUE(full.isOk());
  EXPECT_EQ(steady.value().seconds, full.value().seconds);
  EXPECT_EQ(report.steps, plans.steps());
}

}  // namespace
}  // namespace myriad::netsim
