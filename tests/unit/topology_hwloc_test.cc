// unit tier: the hwloc XML fixtures (v2 and v1) load, with the facts read off each file by hand: GPUs,
// NICs with their OS device names, NUMA nodes, which GPU shares a PCIe switch with which NIC, and NVLink
// only where an NVLinkBandwidth matrix says so.
#include <gtest/gtest.h>

#include "tests/unit/topology_fixtures.h"

namespace myriad {
namespace {

#ifdef MYRIAD_HAVE_PUGIXML

using namespace test;  // NOLINT: the fixture helpers

// The node two levels above (the switch that a GPU and its NIC share in these servers).
int grandparentOfBus(const Topology& t, const std::string& busId) {
  int p = parentOfBus(t, busId);
  return p < 0 ? -2 : t.nodes[p].parent;
}

TEST(HwlocXml, Dgx2SixteenGpusTwelveNvSwitchesTwoBaseboards) {
  Topology t = loadFixture("hwloc-nvidia-dgx2h-16xv100-nvswitch.xml");
  expectCounts(t, {.gpus = 16, .nics = 0, .numa = 2, .nvlinks = 96, .nvswitches = 12});
  EXPECT_EQ(kindOfBus(t, "0000:66:00.0"), NodeKind::kNvSwitch);  // all-zero ids, subtype only
  for (int i = 0; i < 16; ++i) {
    int gi = t.findGpu(i);
    ASSERT_GE(gi, 0) << i;
    double gbps = 0;
    for (const Link& l : t.links) gbps += l.kind == LinkKind::kNvlink && (l.a == gi || l.b == gi) ? l.gbps : 0;
    EXPECT_EQ(gbps, 150) << i;  // 6 links x 25 GB/s
    for (int j = 0; j < 16; ++j) {
      if (i != j) {
        EXPECT_EQ(t.nvlinkConnected(gi, t.findGpu(j)), i / 8 == j / 8) << i << "-" << j;
      }
    }
  }
  EXPECT_EQ(t.nodes[t.findGpu(0)].busId, "0000:34:00.0");
  EXPECT_EQ(numaOfBus(t, "0000:34:00.0"), 0);
  EXPECT_EQ(t.nodes[t.findGpu(0)].device, 0x1db8);
}

TEST(HwlocXml, Power8NvlinkBetweenGpuPairsAndToTheCpu) {
  Topology t = loadFixture("hwloc-ibm-power8-4xp100-nvlink.xml");
  expectCounts(t, {.gpus = 4, .nics = 0, .numa = 2, .nvlinks = 6});
  int g0 = t.findGpu(0), g1 = t.findGpu(1), g2 = t.findGpu(2), g3 = t.findGpu(3);
  ASSERT_TRUE(g0 >= 0 && g1 >= 0 && g2 >= 0 && g3 >= 0);
  EXPECT_EQ(t.nodes[g0].busId, "0002:01:00.0");  // cuda0
  ASSERT_NE(t.nvlinkBetween(g0, g1), nullptr);
  EXPECT_EQ(t.nvlinkBetween(g0, g1)->gbps, 40);
  EXPECT_NE(t.nvlinkBetween(g2, g3), nullptr);
  EXPECT_FALSE(t.nvlinkConnected(g0, g2));
  const Link* toCpu = t.nvlinkBetween(g2, t.indicesOf(NodeKind::kCpu)[1]);
  ASSERT_NE(toCpu, nullptr);
  EXPECT_EQ(t.nodes[toCpu->b].numa, 1);
  EXPECT_EQ(t.nodes[g0].numa, 0);
  EXPECT_EQ(t.nodes[g2].numa, 1);
}

TEST(HwlocXml, JurecaEachGpuSharesASwitchWithOneHdrNic) {
  Topology t = loadFixture("hwloc-jureca-dc-gpu-4xa100-4xhdr.xml");
  // NICs: 4 ConnectX-6 + a dual-port Intel Ethernet; no CUDA/NVML devices, so NVLink is invisible.
  expectCounts(t, {.gpus = 4, .nics = 6, .numa = 8, .nvlinks = 0});
  EXPECT_EQ(kindOfBus(t, "0000:62:00.0"), NodeKind::kPciDevice);  // the BMC's ASPEED VGA is no GPU
  struct Pair {
    const char* gpu;
    const char* nic;
    int numa;
  };
  for (Pair p : {Pair{"0000:03:00.0", "mlx5_0", 3}, Pair{"0000:44:00.0", "mlx5_1", 1},
                 Pair{"0000:84:00.0", "mlx5_2", 7}, Pair{"0000:c4:00.0", "mlx5_3", 5}}) {
    int nic = t.findNic(p.nic);
    ASSERT_GE(nic, 0) << p.nic;
    EXPECT_EQ(kindOfBus(t, p.gpu), NodeKind::kGpu);
    EXPECT_EQ(numaOfBus(t, p.gpu), p.numa) << p.gpu;
    EXPECT_EQ(t.nodes[nic].numa, p.numa) << p.nic;
    EXPECT_EQ(grandparentOfBus(t, p.gpu), grandparentOfBus(t, t.nodes[nic].busId)) << p.gpu;
  }
  EXPECT_EQ(t.findNic("ib0"), t.findNic("mlx5_0"));
  EXPECT_EQ(t.nodes[t.findNic("mlx5_0")].busId, "0000:04:00.0");
  EXPECT_EQ(t.nodes[t.findNic("mlx5_0")].pciClass, 0x020700u);
  EXPECT_EQ(t.findGpu(0), -1);  // no OS device names a CUDA index
  int gpu = t.findBusId("0000:03:00.0");
  for (const Link& l : t.links) {
    if (l.b == gpu) {
      EXPECT_NEAR(l.gbps, 31.5, 0.01);
    }
  }
}

TEST(HwlocXml, MeluxinaV1TwoOfFourGpusHaveANicOnTheirSwitch) {
  Topology t = loadFixture("hwloc-v1-meluxina-gpu-4xa100-2xhdr.xml");
  // NICs: 2 ConnectX-6 + 2 Intel Ethernet ports.
  expectCounts(t, {.gpus = 4, .nics = 4, .numa = 8, .nvlinks = 0});
  EXPECT_EQ(t.nodes[t.findNic("mlx5_0")].numa, 1);
  EXPECT_EQ(t.nodes[t.findNic("mlx5_1")].numa, 7);
  EXPECT_EQ(t.findNic("ib1"), t.findNic("mlx5_1"));
  EXPECT_EQ(grandparentOfBus(t, "0000:44:00.0"), grandparentOfBus(t, "0000:43:00.0"));
  EXPECT_EQ(grandparentOfBus(t, "0000:84:00.0"), grandparentOfBus(t, "0000:83:00.0"));
  EXPECT_EQ(numaOfBus(t, "0000:03:00.0"), 3);
  EXPECT_EQ(numaOfBus(t, "0000:c3:00.0"), 5);
  EXPECT_EQ(numaOfBus(t, "0000:44:00.0"), 1);
  std::vector<int> packages;
  for (int i : t.indicesOf(NodeKind::kCpu)) packages.push_back(t.nodes[i].package);
  EXPECT_EQ(packages, (std::vector<int>{0, 0, 0, 0, 1, 1, 1, 1}));
  EXPECT_EQ(t.nodes[0].cpuVendor, "AuthenticAMD");
}

TEST(HwlocXml, WrittenAsNcclXmlTheDevicesSurvive) {
  Topology h = loadFixture("hwloc-jureca-dc-gpu-4xa100-4xhdr.xml");
  Result<Topology> n = parseTopology(writeNcclXml(h), "written");
  ASSERT_TRUE(n.isOk()) << n.status().toString();
  EXPECT_EQ(n.value().count(NodeKind::kGpu), 4);
  EXPECT_EQ(n.value().count(NodeKind::kNic), 6);
  EXPECT_EQ(numaCount(n.value()), 8);
  EXPECT_EQ(n.value().nodes[n.value().findNic("mlx5_2")].numa, 7);
}

TEST(HwlocXml, MalformedObjectsNameTheLine) {
  Result<Topology> r = parseTopology(
      "<topology version=\"2.0\">\n<object type=\"NUMANode\" os_index=\"0\">\n"
      "<object type=\"PCIDev\" pci_busid=\"0000:01:00.0\" pci_type=\"zz\"/></object></topology>",
      "h.xml");
  ASSERT_FALSE(r.isOk());
  EXPECT_NE(r.status().message().find("h.xml:3: pci_type=\"zz\": expected"), std::string::npos) << r.status().message();
  r = parseTopology("<topology version=\"9\"/>", "h.xml");
  ASSERT_FALSE(r.isOk());
  EXPECT_NE(r.status().message().find("expected 2.x or none"), std::string::npos) << r.status().message();
}

#endif

}  // namespace
}  // namespace myriad
