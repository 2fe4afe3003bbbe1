// unit tier: ring and chain search on the fixtures. An NVSwitch box is NVLink-bottlenecked in any order;
// a PCIe box's ring crosses between NUMA nodes the fewest times possible (twice per pair of groups: once
// into and once out of each NUMA node holding GPUs); a hand-made box checks that NVLink pairs are kept
// adjacent. The reference for "fewest" is counted here from the GPUs' NUMA nodes, not from the search.
#include <gtest/gtest.h>

#include <algorithm>
#include <numeric>
#include <set>

#include "tests/unit/topology_fixtures.h"
#include "topology/search.h"

namespace myriad {
namespace {

// Distinct NUMA nodes holding GPUs: a ring visiting k >= 2 such groups crosses SYS at least k times.
int gpuNumaGroups(const Topology& t) {
  std::set<int> numas;
  for (int g : orderedGpus(t)) numas.insert(t.nodes[g].numa);
  return static_cast<int>(numas.size());
}

void expectPermutation(const std::vector<int>& order, size_t n) {
  std::vector<int> sorted = order;
  std::sort(sorted.begin(), sorted.end());
  std::vector<int> want(n);
  std::iota(want.begin(), want.end(), 0);
  EXPECT_EQ(sorted, want);
}

#ifdef MYRIAD_HAVE_PUGIXML

using namespace test;  // NOLINT: the fixture helpers

TEST(Search, NvswitchBoxIsNvlinkBottleneckedInAnyOrder) {
  Topology t = loadFixture("oci-bm-gpu-h100-8-nccl-topo.xml");
  RingOrder r = searchRing(t);
  expectPermutation(r.gpus, 8);
  EXPECT_EQ(r.worst, PathType::kNvl);
  EXPECT_EQ(r.bottleneckGbps, 450);
  EXPECT_EQ(r.sysCrossings, 0);
  expectPermutation(searchChain(t), 8);
}

TEST(Search, PcieBoxesCrossSysTheFewestTimes) {
  for (const char* f :
       {"azure-ndv2-v100-nccl-topo.xml", "azure-ndv4-a100-nccl-topo.xml", "azure-ndv5-h100-nccl-topo.xml",
        "azure-ncv4-a100pcie-nccl-topo.xml", "aws-p4d-24xlarge-a100-nccl-topo.xml", "oci-bm-gpu4-8-a100-nccl-topo.xml",
        "oci-bm-gpu-b4-8-a100-80gb-nccl-topo.xml", "hwloc-jureca-dc-gpu-4xa100-4xhdr.xml",
        "hwloc-v1-meluxina-gpu-4xa100-2xhdr.xml"}) {
    SCOPED_TRACE(f);
    Topology t = loadFixture(f);
    RingOrder r = searchRing(t);
    expectPermutation(r.gpus, orderedGpus(t).size());
    int groups = gpuNumaGroups(t);
    EXPECT_EQ(r.sysCrossings, groups >= 2 ? groups : 0);
    EXPECT_EQ(r.worst, groups >= 2 ? PathType::kSys : PathType::kPix);
  }
}

TEST(Search, PcieSwitchPairsStayAdjacent) {
  // p4d: two GPUs per switch, two switches per NUMA node; a best ring keeps switch mates together, so it
  // has 4 PIX hops (one inside each switch), 2 PHB hops and 2 SYS hops.
  Topology t = loadFixture("aws-p4d-24xlarge-a100-nccl-topo.xml");
  RingOrder r = searchRing(t);
  std::vector<int> gpus = orderedGpus(t);
  int pix = 0;
  for (size_t i = 0; i < r.gpus.size(); ++i) {
    int a = gpus[r.gpus[i]], b = gpus[r.gpus[(i + 1) % r.gpus.size()]];
    pix += pathBetween(t, a, b).type == PathType::kPix;
  }
  EXPECT_EQ(pix, 4);
  EXPECT_EQ(r.sysCrossings, 2);
}

TEST(Search, Dgx2SixteenGpusLeaveEachBaseboardOnce) {
  Topology t = loadFixture("hwloc-nvidia-dgx2h-16xv100-nvswitch.xml");
  RingOrder r = searchRing(t);
  expectPermutation(r.gpus, 16);
  int offBoard = 0;
  for (size_t i = 0; i < 16; ++i) offBoard += (r.gpus[i] / 8) != (r.gpus[(i + 1) % 16] / 8);
  EXPECT_EQ(offBoard, 2);  // the only hops that are not NVLink in this file
  std::vector<int> chain = searchChain(t);
  expectPermutation(chain, 16);
}

TEST(Search, Power8KeepsNvlinkPairsTogether) {
  Topology t = loadFixture("hwloc-ibm-power8-4xp100-nvlink.xml");
  RingOrder r = searchRing(t);
  EXPECT_EQ(r.sysCrossings, 2);
  std::vector<int> chain = searchChain(t);
  ASSERT_EQ(chain.size(), 4u);
  // The chain opens at a SYS hop, so its middle hop is the one SYS hop left and its ends are NVLink pairs.
  EXPECT_EQ(chain[0] / 2, chain[1] / 2);
  EXPECT_EQ(chain[2] / 2, chain[3] / 2);
}

TEST(Search, NoGpusNoRing) {
  for (const char* f : {"rccl-amd-mi300x-8gpu-8nic-topo.xml", "aws-p5-48xlarge-h100-nccl-topo.xml"}) {
    Topology t = loadFixture(f);
    EXPECT_TRUE(searchRing(t).gpus.empty()) << f;
    EXPECT_TRUE(searchChain(t).empty()) << f;
  }
}

#endif

// Six GPUs on one CPU, NVLink only between (0,3), (1,4), (2,5): the ring must use all three NVLink pairs.
TEST(Search, HandMadeNvlinkPairsAreRingNeighbours) {
  Topology t;
  Node cpu;
  cpu.kind = NodeKind::kCpu;
  cpu.numa = 0;
  int c = t.add(cpu);
  for (int i = 0; i < 6; ++i) {
    Node g;
    g.kind = NodeKind::kGpu;
    g.parent = c;
    g.gpuIndex = i;
    g.sm = 80;
    g.busId = "0000:00:0" + std::to_string(i) + ".0";  // one root bus: one host bridge
    int gi = t.add(g);
    t.links.push_back(Link{LinkKind::kPcie, c, gi, 4, 16, 0, 31.5});
  }
  for (auto [a, b] : {std::pair{0, 3}, {1, 4}, {2, 5}})
    t.links.push_back(Link{LinkKind::kNvlink, a + 1, b + 1, 0, 0, 4, 100});
  RingOrder r = searchRing(t);
  int nv = 0;
  for (size_t i = 0; i < 6; ++i) {
    int a = r.gpus[i], b = r.gpus[(i + 1) % 6];
    nv += std::min(a, b) + 3 == std::max(a, b);
  }
  EXPECT_EQ(nv, 3);
  EXPECT_EQ(r.worst, PathType::kPhb);
  EXPECT_EQ(r.sysCrossings, 0);
}

}  // namespace
}  // namespace myriad
