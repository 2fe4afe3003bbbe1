// unit tier: the rank's NIC from recorded topologies (tests/fixtures/topologies): a host rank pinned to a
// NUMA node gets a NIC of that node, a GPU rank the NIC nearest its GPU, matched by name against the verbs
// ports; every case where the topology cannot decide gives a reason (the caller then falls back to the
// rank's port). The references are the files' own attributes (a NIC's NUMA node, its PCI parent).
#include "transports/rdma/nic_choice.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "tests/unit/topology_fixtures.h"
#include "topology/paths.h"

namespace myriad {
namespace {

std::vector<int> range(int lo, int hi) {  // [lo, hi)
  std::vector<int> v;
  for (int i = lo; i < hi; ++i) v.push_back(i);
  return v;
}

TEST(NicChoice, CpusOfMask) {
  EXPECT_EQ(cpusOfMask("000000ff,ffff0000"), range(16, 40));
  EXPECT_EQ(cpusOfMask("0x00000003,,0x00000001"), (std::vector<int>{0, 64, 65}));
  EXPECT_EQ(cpusOfMask("1"), std::vector<int>{0});
  EXPECT_TRUE(cpusOfMask("").empty());
  EXPECT_TRUE(cpusOfMask("00zz").empty());
  EXPECT_TRUE(cpusOfMask("1ffffffff").empty());  // a word wider than 32 bits
}

TEST(NicChoice, NoNicOrNoAffinityGivesAReason) {
  Topology t;
  Node cpu;
  cpu.kind = NodeKind::kCpu;
  cpu.numa = 0;
  cpu.affinity = "0000000f";
  t.add(cpu);
  NicWish w;
  w.cpus = {0, 1};
  NicChoice c = topologyNic(t, w);
  EXPECT_EQ(c.nic, -1);
  EXPECT_NE(c.why.find("no NIC"), std::string::npos) << c.why;
  std::string why;
  EXPECT_EQ(numaOfCpus(t, {}, &why), -1);
  EXPECT_NE(why.find("unknown"), std::string::npos) << why;
  EXPECT_EQ(numaOfCpus(t, {2, 7}, &why), -1);  // CPU 7 is on no node of the file
  EXPECT_NE(why.find("CPU 7"), std::string::npos) << why;
  EXPECT_EQ(numaOfCpus(t, {3}, &why), 0);
}

#ifdef MYRIAD_HAVE_PUGIXML
// RCCL's MI300X server: 2 NUMA nodes, 4 NICs on each.
TEST(NicChoice, HostRankPinnedToNuma1GetsANuma1Nic) {
  Topology t = test::loadFixture("rccl-amd-mi300x-8gpu-8nic-topo.xml");
  ASSERT_EQ(test::numaCount(t), 2);
  std::vector<int> numa1, numa0;
  for (int i : t.indicesOf(NodeKind::kCpu))
    (t.nodes[static_cast<size_t>(i)].numa == 1 ? numa1 : numa0) = cpusOfMask(t.nodes[static_cast<size_t>(i)].affinity);
  ASSERT_FALSE(numa1.empty());
  std::vector<IbPortName> all;
  for (int n : t.indicesOf(NodeKind::kNic))
    for (const NicPort& p : t.nodes[static_cast<size_t>(n)].ports) all.push_back({p.name, p.port});
  ASSERT_EQ(all.size(), 8u);
  for (int spread = 0; spread < 4; ++spread) {
    NicWish w;
    w.cpus = {numa1[3], numa1[5]};
    w.spread = spread;
    NicChoice c = topologyNic(t, w);
    ASSERT_GE(c.nic, 0) << c.why;
    EXPECT_EQ(t.nodes[static_cast<size_t>(c.nic)].numa, 1);
    EXPECT_EQ(c.via, "NUMA node 1");
    std::string why;
    int k = matchNic(all, c, &why);
    ASSERT_GE(k, 0) << why;
    EXPECT_EQ(t.findNic(all[static_cast<size_t>(k)].device), c.nic);
  }
  NicWish w0;
  w0.cpus = {numa0.front()};
  NicChoice c0 = topologyNic(t, w0);
  ASSERT_GE(c0.nic, 0) << c0.why;
  EXPECT_EQ(t.nodes[static_cast<size_t>(c0.nic)].numa, 0);
}

TEST(NicChoice, AffinityOverBothNodesOrAFilteredNicFallsBack) {
  Topology t = test::loadFixture("rccl-amd-mi300x-8gpu-8nic-topo.xml");
  std::vector<int> cpus;
  for (int i : t.indicesOf(NodeKind::kCpu)) cpus.push_back(cpusOfMask(t.nodes[static_cast<size_t>(i)].affinity)[0]);
  NicWish w;
  w.cpus = cpus;
  NicChoice c = topologyNic(t, w);
  EXPECT_EQ(c.nic, -1);
  EXPECT_NE(c.why.find("spans NUMA nodes 0,1"), std::string::npos) << c.why;
  std::string why;
  EXPECT_EQ(matchNic({{"mlx5_0", 1}}, c, &why), -1);
  EXPECT_EQ(why, c.why);
  // Pinned, but MYRIAD_IB_HCA let through only a device the topology does not choose.
  w.cpus = {cpus.back()};
  c = topologyNic(t, w);
  ASSERT_GE(c.nic, 0) << c.why;
  EXPECT_EQ(matchNic({{"rxe9", 1}}, c, &why), -1);
  EXPECT_NE(why.find("is not among the usable ports (rxe9:1)"), std::string::npos) << why;
}

// OCI's H100 server: every GPU behind a PCIe switch with its own NICs; the GPU's NIC is one of those.
TEST(NicChoice, GpuRankGetsTheNicBesideItsGpu) {
  Topology t = test::loadFixture("oci-bm-gpu-h100-8-nccl-topo.xml");
  std::vector<int> gpus = orderedGpus(t);
  ASSERT_EQ(gpus.size(), 8u);
  for (int g = 0; g < 8; ++g) {
    NicWish w;
    w.gpu = t.nodes[static_cast<size_t>(gpus[static_cast<size_t>(g)])].gpuIndex;
    NicChoice c = topologyNic(t, w);
    ASSERT_GE(c.nic, 0) << c.why;
    EXPECT_EQ(pathName(pathBetween(t, gpus[static_cast<size_t>(g)], c.nic)), "PIX") << "GPU " << w.gpu;
    EXPECT_FALSE(c.ports.empty());
  }
  NicWish none;
  none.gpu = 42;
  NicChoice c = topologyNic(t, none);
  EXPECT_EQ(c.nic, -1);
  EXPECT_NE(c.why.find("no GPU 42"), std::string::npos) << c.why;
}
#endif

}  // namespace
}  // namespace myriad
