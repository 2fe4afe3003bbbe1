// myriad-sim's model (tools/sim) against closed forms: ECMP of 8 flows on 8 spines, max-min fairness by
// hand, a ring all-reduce on a non-blocking fabric (and the tree all-reduce against its busiest NIC's bound),
// an elephant sharing a flow's spine, and a flow cut by a link failure resuming on another spine.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "tools/sim/fabric.h"
#include "tools/sim/flow_network.h"
#include "tools/sim/max_min.h"
#include "tools/sim/path_ports.h"
#include "tools/sim/plan_call.h"
#include "tools/sim/virtual_executor.h"

namespace myriad::netsim {
namespace {

// E[max bin] for `balls` balls thrown uniformly into `bins` bins, and P(no two share a bin), exactly:
// the count of assignments with every bin <= m is balls! [x^balls] (sum_{k<=m} x^k / k!)^bins.
double atMost(int balls, int bins, int m) {
  std::vector<double> poly(static_cast<size_t>(balls) + 1, 0.0), term(poly.size(), 0.0);
  poly[0] = 1;
  double fact = 1;
  for (int k = 0; k <= std::min(m, balls); ++k) term[static_cast<size_t>(k)] = 1 / fact, fact *= k + 1;
  for (int b = 0; b < bins; ++b) {
    std::vector<double> next(poly.size(), 0.0);
    for (size_t i = 0; i < poly.size(); ++i)
      for (size_t j = 0; i + j < poly.size(); ++j) next[i + j] += poly[i] * term[j];
    poly = next;
  }
  double ballsFact = 1;
  for (int k = 2; k <= balls; ++k) ballsFact *= k;
  return poly[static_cast<size_t>(balls)] * ballsFact / std::pow(bins, balls);
}

TEST(NetsimEcmp, EightFlowsOnEightSpinesMatchBallsInBins) {
  double expectedMax = 0;
  for (int m = 0; m < 8; ++m) expectedMax += 1 - atMost(8, 8, m);
  const double pNoCollision = atMost(8, 8, 1);
  EXPECT_NEAR(expectedMax, 2.6, 0.05);
  EXPECT_NEAR(pNoCollision, 40320.0 / 16777216.0, 1e-12);

  // 8 hosts under leaf 0 each send one flow to a host under leaf 1; 8 spines. A new seed is a new draw of
  // every leaf's hash seed and every pair's source port.
  FabricSpec spec;
  spec.nranks = 16, spec.hostsPerLeaf = 8, spec.spines = 8;
  const int kSeeds = 50000;
  double sumMax = 0, sumMaxSq = 0;
  int noCollision = 0;
  for (int seed = 1; seed <= kSeeds; ++seed) {
    spec.seed = static_cast<uint64_t>(seed);
    auto fabric = Fabric::make(spec);
    ASSERT_TRUE(fabric.isOk()) << fabric.status().toString();
    int load[8] = {};
    for (int r = 0; r < 8; ++r) {
      Route route = fabric.value().route(r, 8 + r, pathPorts(spec.seed, r, 8 + r, 1)[0]);
      ASSERT_GE(route.spine, 0);
      ++load[route.spine];
    }
    int worst = *std::max_element(load, load + 8);
    sumMax += worst, sumMaxSq += worst * worst;
    noCollision += worst == 1;
  }
  const double mean = sumMax / kSeeds, sd = std::sqrt(sumMaxSq / kSeeds - mean * mean);
  // Five standard errors either way: a false failure about once in 3.5 million runs.
  EXPECT_NEAR(mean, expectedMax, 5 * sd / std::sqrt(kSeeds)) << "sd of the worst load " << sd;
  const double expectNone = pNoCollision * kSeeds, sdNone = std::sqrt(kSeeds * pNoCollision * (1 - pNoCollision));
  EXPECT_NEAR(noCollision, expectNone, 5 * sdNone);
}

TEST(NetsimEcmp, EqualLeafSeedsPolarise) {
  // With one seed on every leaf, the same 5-tuple leaves every leaf on the same spine.
  FabricSpec spec;
  spec.nranks = 16, spec.hostsPerLeaf = 4, spec.spines = 8, spec.sameLeafSeeds = true;
  auto fabric = Fabric::make(spec);
  ASSERT_TRUE(fabric.isOk());
  const Fabric& f = fabric.value();
  for (int leaf = 1; leaf < f.leaves(); ++leaf) EXPECT_EQ(f.leafSeed(leaf), f.leafSeed(0));
  spec.sameLeafSeeds = false;
  auto spread = Fabric::make(spec);
  ASSERT_TRUE(spread.isOk());
  EXPECT_NE(spread.value().leafSeed(1), spread.value().leafSeed(0));
}

TEST(NetsimMaxMin, TwoShareOneLinkAThirdIsHeldElsewhere) {
  // Links 0 and 1 carry 10, link 2 carries 4. Flow C (links 1, 2) is held to 4 by link 2; on link 1 that
  // leaves 6 for B, but link 0 splits 10 between A and B: 5 each.
  std::vector<double> rate = maxMinRates({{0}, {0, 1}, {1, 2}}, {10, 10, 4});
  ASSERT_EQ(rate.size(), 3u);
  EXPECT_DOUBLE_EQ(rate[0], 5);
  EXPECT_DOUBLE_EQ(rate[1], 5);
  EXPECT_DOUBLE_EQ(rate[2], 4);
}

TEST(NetsimMaxMin, AFlowAloneTakesItsNarrowestLink) {
  std::vector<double> rate = maxMinRates({{0, 1, 2}, {}}, {10, 3, 7});
  EXPECT_DOUBLE_EQ(rate[0], 3);
  EXPECT_DOUBLE_EQ(rate[1], 0);
}

// Moves `net` on to its next finish and forgets the flows that finished from the test's own lists (each
// flow's id, links and tag, in step); returns how many finished.
size_t finishNext(FlowNetwork& net, std::vector<int>* ids, std::vector<std::vector<int>>* paths,
                  std::vector<uint64_t>* tags) {
  std::vector<uint64_t> done;
  net.advance(net.nextFinish(), &done);
  size_t kept = 0;
  for (size_t i = 0; i < ids->size(); ++i)
    if (std::find(done.begin(), done.end(), (*tags)[i]) == done.end())
      (*ids)[kept] = (*ids)[i], (*paths)[kept] = (*paths)[i], (*tags)[kept] = (*tags)[i], ++kept;
  ids->resize(kept), paths->resize(kept), tags->resize(kept);
  return done.size();
}

// The incremental FlowNetwork (rates recomputed over the touched component only) against the full
// recomputation, on random flow sets that grow and shrink.
TEST(NetsimMaxMin, IncrementalRatesMatchTheFullRecomputation) {
  std::mt19937 rng(19);
  for (int trial = 0; trial < 20; ++trial) {
    const int nl = 4 + static_cast<int>(rng() % 40);
    std::vector<double> cap(static_cast<size_t>(nl));
    for (double& c : cap) c = 1 + static_cast<double>(rng() % 100);
    FlowNetwork net(cap);
    std::vector<int> ids;
    std::vector<std::vector<int>> paths;
    std::vector<uint64_t> tags;
    for (int round = 0; round < 30; ++round) {
      const int add = 1 + static_cast<int>(rng() % 6);
      for (int a = 0; a < add; ++a) {
        std::vector<int> p;
        const int len = 1 + static_cast<int>(rng() % 4);
        for (int k = 0; k < len; ++k) {
          int l = static_cast<int>(rng() % static_cast<unsigned>(nl));
          if (std::find(p.begin(), p.end(), l) == p.end()) p.push_back(l);
        }
        const double bytes = 1 + static_cast<double>(rng() % 1000);
        tags.push_back(tags.empty() ? 0 : tags.back() + 1);
        ids.push_back(net.start(p, bytes, tags.back()));
        paths.push_back(p);
      }
      std::vector<double> full = maxMinRates(paths, cap);
      for (size_t i = 0; i < ids.size(); ++i) EXPECT_NEAR(net.rate(ids[i]), full[i], 1e-9 * (1 + full[i]));
      // Let the first flow to finish finish: the survivors must again match.
      ASSERT_GT(finishNext(net, &ids, &paths, &tags), 0u);
      EXPECT_EQ(net.active(), ids.size());
      full = maxMinRates(paths, cap);
      for (size_t i = 0; i < ids.size(); ++i) EXPECT_NEAR(net.rate(ids[i]), full[i], 1e-9 * (1 + full[i]));
    }
  }
}

// The same on a leaf-spine fabric's routes, where the connected component of a change is most of the
// network: 256 hosts, flows between random hosts over the spine ECMP picks, links of mixed speed (degraded
// uplinks), elephants that never end. The rates must match the full recomputation after every start and
// finish, and a change must be resolved over a region much smaller than the active flows.
TEST(NetsimMaxMin, RatesOnALeafSpineFabricMatchTheFullRecomputationFromALocalRegion) {
  FabricSpec spec;
  spec.nranks = 256, spec.hostsPerLeaf = 16, spec.spines = 8;
  Result<Fabric> made = Fabric::make(spec);
  ASSERT_TRUE(made.isOk()) << made.status().message();
  Fabric& fabric = made.value();
  std::mt19937 rng(7);
  for (int d = 0; d < 24; ++d)
    fabric.degrade(fabric.leafUp(static_cast<int>(rng() % 16), static_cast<int>(rng() % 8)), 1.5 + rng() % 4);
  std::vector<double> cap;
  for (const Link& l : fabric.links()) cap.push_back(l.capacity);
  FlowNetwork net(cap);
  std::vector<int> ids;
  std::vector<std::vector<int>> paths;
  std::vector<uint64_t> tags;
  uint64_t tag = 0;
  auto add = [&](double bytes) {
    const int src = static_cast<int>(rng() % 256), dst = (src + 1 + static_cast<int>(rng() % 255)) % 256;
    Route r = fabric.route(src, dst, static_cast<uint16_t>(rng()));
    paths.push_back(r.links), tags.push_back(tag);
    ids.push_back(net.start(std::move(r.links), bytes, tag++));
  };
  auto matches = [&] {
    const std::vector<double> full = maxMinRates(paths, cap);
    for (size_t i = 0; i < ids.size(); ++i)
      if (std::abs(net.rate(ids[i]) - full[i]) > 1e-9 * full[i]) return false;
    return true;
  };
  for (int e = 0; e < 6; ++e) add(FlowNetwork::kForever);
  for (int f = 0; f < 400; ++f) add(1e6 + static_cast<double>(rng() % 1000000));
  ASSERT_TRUE(matches());
  const FlowNetwork::Stats before = net.stats();
  for (int event = 0; event < 300; ++event) {
    const size_t finished = finishNext(net, &ids, &paths, &tags);
    ASSERT_GT(finished, 0u);
    for (size_t a = 0; a < finished; ++a) add(1e6 + static_cast<double>(rng() % 1000000));
    ASSERT_TRUE(matches()) << "after event " << event;
  }
  const FlowNetwork::Stats& after = net.stats();
  const double perChange =
      static_cast<double>(after.rerateFlows - before.rerateFlows) / static_cast<double>(after.rerates - before.rerates);
  EXPECT_LT(perChange, static_cast<double>(net.active()) / 4) << "flows recomputed per change";
  EXPECT_GT(after.rerateRounds - before.rerateRounds, after.rerates - before.rerates) << "no region ever grew";
}

// An all-reduce of `bytes` by `algo` over every rank of `spec`, planned as the library would, one path.
Result<RunResult> allReduceOn(const FabricSpec& spec, const char* algo, size_t bytes) {
  MYR_ASSIGN_OR_RETURN(Fabric fabric, Fabric::make(spec));
  CallSpec call;
  call.kind = CollKind::kAllReduce, call.bytes = bytes, call.nranks = spec.nranks, call.algo = algo;
  MYR_ASSIGN_OR_RETURN(PlannedCall planned, planCall(call));
  return VirtualExecutor(fabric, 1).run(planned.plans);
}

TEST(NetsimRun, RingAllReduceMatchesItsClosedForm) {
  const int n = 8;
  const size_t bytes = size_t{64} << 20;
  FabricSpec spec;
  spec.nranks = n, spec.hostsPerLeaf = n, spec.spines = 1;  // one leaf: non-blocking
  spec.memBytesPerSec = 1e18;                               // reductions free: the closed form has none
  auto res = allReduceOn(spec, "allreduce.ring", bytes);
  ASSERT_TRUE(res.isOk()) << res.status().toString();
  // 2(N-1) steps of B/N bytes at the NIC's rate, each paying the path latency (NIC up and down: 2 hops).
  const double latency = 2 * spec.linkLatency;
  const double reference =
      2.0 * (n - 1) / n * static_cast<double>(bytes) / spec.nicBytesPerSec + 2.0 * (n - 1) * latency;
  EXPECT_NEAR(res.value().seconds, reference, 0.03 * reference)
      << "simulated " << res.value().seconds * 1e6 << " us, closed form " << reference * 1e6 << " us";
}

// The double binary tree sends up one tree and down the other over the same links, and messages to a peer
// leave in the order they were planned: the plan must not put a slice's way down ahead of later slices'
// way up on a link, or every slice waits for a trip to the root and back. On a non-blocking fabric its
// busiest NIC carries about twice the buffer (an inner node of one tree sends its half up and to two
// children); the call must take little more than that. Planned in (slice, tree, phase) order, 64 ranks
// took 14x this bound.
TEST(NetsimRun, TheTreeAllReduceKeepsBothTreesPipelinedOnSharedLinks) {
  const int n = 64;
  const size_t bytes = size_t{16} << 20;
  FabricSpec spec;
  spec.nranks = n, spec.hostsPerLeaf = n, spec.spines = 1;  // one leaf: non-blocking
  auto res = allReduceOn(spec, "allreduce.tree", bytes);
  ASSERT_TRUE(res.isOk()) << res.status().toString();
  const double bound = 2.0 * static_cast<double>(bytes) / spec.nicBytesPerSec;
  EXPECT_LT(res.value().seconds, 1.6 * bound)
      << "simulated " << res.value().seconds * 1e6 << " us, busiest NIC's bound " << bound * 1e6 << " us";
}

// One 16 MiB message between two hosts under two leaves of four spines: the fabric, the plans, the spine
// ECMP gives its one flow, and its wire time and 4-hop latency alone on the fabric.
struct OneFlow {
  FabricSpec spec;
  Fabric f;
  std::vector<Schedule> plans{2};
  int spine = -1;
  double wire = 0, latency = 0;

  OneFlow() {
    spec.nranks = 2, spec.hostsPerLeaf = 1, spec.spines = 4;
    f = Fabric::make(spec).value();
    const size_t bytes = size_t{16} << 20;
    plans[0].send(1, Schedule::sendBuf(), bytes);
    plans[1].recv(0, Schedule::recvBuf(), bytes);
    spine = f.route(0, 1, pathPorts(spec.seed, 0, 1, 1)[0]).spine;
    wire = static_cast<double>(bytes) / spec.nicBytesPerSec, latency = 4 * spec.linkLatency;
  }
};

TEST(NetsimRun, AnElephantOnItsSpineHalvesAFlow) {
  const OneFlow one;
  const Fabric& f = one.f;
  const auto& plans = one.plans;
  const int spine = one.spine;
  ASSERT_GE(spine, 0);

  auto alone = VirtualExecutor(f, 1).run(plans);
  ASSERT_TRUE(alone.isOk()) << alone.status().toString();
  auto shared = VirtualExecutor(f, 1, {Elephant{{f.leafUp(0, spine)}}}).run(plans);
  ASSERT_TRUE(shared.isOk()) << shared.status().toString();
  auto elsewhere = VirtualExecutor(f, 1, {Elephant{{f.leafUp(0, (spine + 1) % 4)}}}).run(plans);
  ASSERT_TRUE(elsewhere.isOk()) << elsewhere.status().toString();

  const double wire = one.wire, latency = one.latency;
  EXPECT_NEAR(alone.value().seconds, wire + latency, 1e-9);
  EXPECT_NEAR(shared.value().seconds, 2 * wire + latency, 1e-9);  // the spine uplink split in two
  EXPECT_NEAR(elsewhere.value().seconds, wire + latency, 1e-9);
}

// A send posted before its receive: its bytes travel into the receiver's socket buffers while the receiver
// is busy (a copy twice the message's wire time), so the receive completes as soon as it is posted and the
// send as soon as it is written. Without buffers (eagerBytes 0), or with a message larger than they hold,
// the bytes wait for the receive and arrive a wire time and a latency after it.
TEST(NetsimRun, AMessageSentAheadOfItsReceiveWaitsInTheSocketBuffers) {
  FabricSpec spec;
  spec.nranks = 2, spec.hostsPerLeaf = 2, spec.spines = 1;
  auto fabric = Fabric::make(spec);
  ASSERT_TRUE(fabric.isOk());
  const double latency = 2 * spec.linkLatency;
  for (size_t bytes : {size_t{1} << 20, size_t{16} << 20}) {
    const double wire = static_cast<double>(bytes) / spec.nicBytesPerSec;
    const size_t copyBytes = static_cast<size_t>(wire * spec.memBytesPerSec);  // touches 2x: 2 wire times
    const double busy = 2.0 * static_cast<double>(copyBytes) / spec.memBytesPerSec;
    std::vector<Schedule> plans(2);
    plans[0].send(1, Schedule::sendBuf(), bytes);
    Schedule::Step copy = plans[1].copy(Schedule::recvBuf(), Schedule::sendBuf(), copyBytes);
    plans[1].recv(0, Schedule::recvBuf(), bytes, {copy});
    for (double eager : {0.0, kDefaultEagerBytes}) {
      VirtualExecutor exec(fabric.value(), 1);
      exec.eagerBytes(eager);
      auto res = exec.run(plans);
      ASSERT_TRUE(res.isOk()) << res.status().toString();
      const bool ahead = eager >= static_cast<double>(bytes);
      EXPECT_NEAR(res.value().rankFinish[1], ahead ? busy : busy + wire + latency, 1e-9)
          << bytes << " bytes, eager window " << eager;
      EXPECT_NEAR(res.value().rankFinish[0], ahead ? 0 : busy + wire + latency, 1e-9)
          << bytes << " bytes, eager window " << eager;
    }
  }
}

// A leaf-spine cable fails halfway through a flow that crosses it: the flow stops, resumes one
// retransmission timeout later on another spine and moves its other half at full rate there; a failure on
// a spine it does not use changes nothing; with every uplink of its leaf gone the run ends as a deadlock that
// says why, not a hang.
TEST(NetsimRun, AFlowCutByALinkFailureResumesOnAnotherSpine) {
  const OneFlow one;
  const Fabric& f = one.f;
  const auto& plans = one.plans;
  const int spine = one.spine;
  ASSERT_GE(spine, 0);
  const double wire = one.wire, latency = one.latency;
  const double rto = 0.2;

  VirtualExecutor cut(f, 1);
  cut.failures({LinkFailure{{f.leafUp(0, spine), f.spineDown(spine, 0)}, wire / 2, rto}});
  auto r = cut.run(plans);
  ASSERT_TRUE(r.isOk()) << r.status().toString();
  EXPECT_NEAR(r.value().seconds, wire + rto + latency, 1e-9);
  EXPECT_EQ(r.value().flowsCut, 1u);

  VirtualExecutor other(f, 1);
  other.failures({LinkFailure{{f.leafUp(0, (spine + 1) % 4)}, wire / 2, rto}});
  auto o = other.run(plans);
  ASSERT_TRUE(o.isOk()) << o.status().toString();
  EXPECT_NEAR(o.value().seconds, wire + latency, 1e-9);
  EXPECT_EQ(o.value().flowsCut, 0u);

  VirtualExecutor all(f, 1);
  all.failures({LinkFailure{{f.leafUp(0, 0), f.leafUp(0, 1), f.leafUp(0, 2), f.leafUp(0, 3)}, wire / 2, rto}});
  auto a = all.run(plans);
  ASSERT_FALSE(a.isOk());
  EXPECT_NE(a.status().message().find("no live path"), std::string::npos) << a.status().toString();
}

TEST(NetsimRun, MismatchedPlansAreNamedNotHung) {
  FabricSpec spec;
  spec.nranks = 2;
  auto fabric = Fabric::make(spec);
  ASSERT_TRUE(fabric.isOk());
  std::vector<Schedule> plans(2);
  plans[0].send(1, Schedule::sendBuf(), 64);
  auto res = VirtualExecutor(fabric.value(), 1).run(plans);
  ASSERT_FALSE(res.isOk());
  EXPECT_NE(res.status().message().find("sends 1 messages to rank 1, which receives 0"), std::string::npos)
      << res.status().toString();
}

// An elephant over no links, too many, a link the fabric lacks or one link twice is refused by name before
// anything runs.
TEST(NetsimRun, AMalformedElephantIsRefused) {
  const OneFlow one;
  const Fabric& f = one.f;
  const int links = static_cast<int>(f.links().size());
  const std::vector<std::pair<std::vector<int>, std::string>> bad = {
      {{}, "crosses 0 links"},
      {std::vector<int>(FlowNetwork::kMaxLinks + 1, 0),
       "crosses " + std::to_string(FlowNetwork::kMaxLinks + 1) + " links"},
      {{links}, "does not have"},
      {{-1}, "does not have"},
      {{f.leafUp(0, 0), f.leafUp(0, 0)}, "crosses twice"},
  };
  for (const auto& [path, why] : bad) {
    auto r = VirtualExecutor(f, 1, {Elephant{path}}).run(one.plans);
    ASSERT_FALSE(r.isOk()) << why;
    EXPECT_EQ(r.status().code(), Code::kInvalidArgument) << r.status().toString();
    EXPECT_NE(r.status().message().find(why), std::string::npos) << r.status().toString();
  }
  EXPECT_TRUE(VirtualExecutor(f, 1, {Elephant{{f.leafUp(0, 0)}}}).run(one.plans).isOk());
}

TEST(NetsimRun, EveryCollectiveOfTheCliPlansAndFinishes) {
  FabricSpec spec;
  spec.nranks = 16, spec.ranksPerHost = 4, spec.hostsPerLeaf = 2, spec.spines = 2;
  auto fabric = Fabric::make(spec);
  ASSERT_TRUE(fabric.isOk());
  for (const char* name : {"all_reduce", "all_gather", "reduce_scatter", "all_to_all", "broadcast"}) {
    auto kind = parseCollective(name);
    ASSERT_TRUE(kind.isOk());
    CallSpec call;
    call.kind = kind.value(), call.bytes = size_t{1} << 20, call.nranks = 16, call.ranksPerHost = 4;
    auto planned = planCall(call);
    ASSERT_TRUE(planned.isOk()) << name << ": " << planned.status().toString();
    auto res = VirtualExecutor(fabric.value(), 2).run(planned.value().plans);
    ASSERT_TRUE(res.isOk()) << name << " (" << planned.value().algorithm << "): " << res.status().toString();
    EXPECT_GT(res.value().seconds, 0) << name;
  }
}

}  // namespace
}  // namespace myriad::netsim
