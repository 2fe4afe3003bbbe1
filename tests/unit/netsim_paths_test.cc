// The simulator's path policies (tools/sim/sim_paths.h): the library's PathSet picks the ports in both, the
// adaptive policy splits by measured rate and lets the library's control loop move a path that stays slow,
// and on a ring whose pairs share spine uplinks with elephants it recovers the collision-free time where the
// even split does not, at no cost without them.
#include <gtest/gtest.h>

#include <algorithm>
#include <vector>

#include "tools/sim/fabric.h"
#include "tools/sim/path_ports.h"
#include "tools/sim/plan_call.h"
#include "tools/sim/sim_paths.h"
#include "tools/sim/virtual_executor.h"

namespace myriad::netsim {
namespace {

TEST(NetsimPaths, BothPoliciesStartOnTheLibrarysPorts) {
  const std::vector<uint16_t> want = pathPorts(7, 3, 5, 4);
  for (PathPolicy p : {PathPolicy::kStatic, PathPolicy::kAdaptive}) {
    SimPaths paths(7, 3, 5, 4, p, 0);
    ASSERT_EQ(paths.size(), 4);
    for (int i = 0; i < 4; ++i) EXPECT_EQ(paths.port(i), want[static_cast<size_t>(i)]);
  }
  EXPECT_NE(pathPorts(7, 3, 5, 4), pathPorts(7, 5, 3, 4));  // a seed per pair and direction
}

// Position 0 runs at a third of its siblings' rate. Static: an even split, no moves. Adaptive: the split
// follows the rates (a third as many bytes on position 0), and the control loop, judging per-chunk service
// times, moves position 0 to a fresh port and leaves the others where they are.
TEST(NetsimPaths, AdaptiveSplitsByRateAndMovesAPathThatStaysSlow) {
  const double mib = 1 << 20;
  for (PathPolicy policy : {PathPolicy::kStatic, PathPolicy::kAdaptive}) {
    SimPaths paths(11, 0, 1, 4, policy, 0);
    const std::vector<uint16_t> first = {paths.port(0), paths.port(1), paths.port(2), paths.port(3)};
    double now = 0;
    bool balanced = false;
    for (int message = 0; message < 400 && paths.repaths() == 0; ++message) {
      paths.split(4 * mib);
      double slowest = 0;
      for (int p = 0; p < 4; ++p) {
        const double rate = paths.port(p) == first[0] ? 1e9 : 3e9;  // the first port of position 0 is slow
        slowest = std::max(slowest, paths.part(p) / rate);
      }
      balanced = balanced || std::abs(paths.part(1) / paths.part(0) - 3) < 1e-6;
      now += slowest;
      for (int p = 0; p < 4; ++p) {
        const double rate = paths.port(p) == first[0] ? 1e9 : 3e9;
        paths.served(p, paths.part(p) / rate, now);
      }
    }
    if (policy == PathPolicy::kStatic) {
      EXPECT_EQ(paths.repaths(), 0u);
      EXPECT_DOUBLE_EQ(paths.part(0), paths.part(1));
      continue;
    }
    EXPECT_TRUE(balanced) << "the split never followed the rates";
    ASSERT_EQ(paths.repaths(), 1u) << "the slow path was never moved";
    EXPECT_NE(paths.port(0), first[0]);
    for (int p = 1; p < 4; ++p) EXPECT_EQ(paths.port(p), first[static_cast<size_t>(p)]);
    paths.split(4 * mib);  // the fresh path is unmeasured: it counts as the measured mean
    EXPECT_NEAR(paths.part(0), paths.part(1), 1e-6 * mib);
  }
}

// Eight hosts, one per leaf, two spines at 10 Gb/s; a ring all-reduce over 4 paths per pair. Three
// elephants leave every leaf on its uplink to spine 0. Each pair's paths on spine 0 get a fifth of that
// uplink; the even split waits for them (the call takes 1.5x as long), the adaptive split moves the bytes to
// the paths on spine 1, which the NIC then fills: the collision-free time. Without elephants the two agree.
TEST(NetsimRun, AdaptiveSplitRecoversTheCollisionFreeTimeOfARing) {
  FabricSpec spec;
  spec.nranks = 8, spec.hostsPerLeaf = 1, spec.spines = 2;
  spec.nicBytesPerSec = spec.spineBytesPerSec = 10e9 / 8;
  auto fabric = Fabric::make(spec);
  ASSERT_TRUE(fabric.isOk());
  const Fabric& f = fabric.value();
  CallSpec call;
  call.kind = CollKind::kAllReduce, call.bytes = size_t{64} << 20, call.nranks = 8, call.algo = "allreduce.ring";
  auto planned = planCall(call);
  ASSERT_TRUE(planned.isOk()) << planned.status().toString();
  std::vector<Elephant> elephants;
  for (int leaf = 0; leaf < 8; ++leaf)
    for (int k = 1; k <= 3; ++k) elephants.push_back({{f.leafUp(leaf, 0), f.spineDown(0, (leaf + k) % 8)}});
  auto seconds = [&](PathPolicy policy, bool withElephants) {
    VirtualExecutor exec(f, 4, withElephants ? elephants : std::vector<Elephant>{});
    exec.policy(policy);
    auto r = exec.run(planned.value().plans);
    EXPECT_TRUE(r.isOk()) << r.status().toString();
    return r.isOk() ? r.value().seconds : 0.0;
  };
  const double alone = seconds(PathPolicy::kStatic, false);
  ASSERT_GT(alone, 0);
  EXPECT_NEAR(seconds(PathPolicy::kAdaptive, false), alone, 1e-3 * alone);
  EXPECT_GT(seconds(PathPolicy::kStatic, true), 1.4 * alone);
  EXPECT_LT(seconds(PathPolicy::kAdaptive, true), 1.01 * alone);
}

}  // namespace
}  // namespace myriad::netsim
