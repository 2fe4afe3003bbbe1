// unit tier: every NCCL topology XML fixture loads, and the facts read off each file by hand hold: GPU,
// NIC and NUMA counts, NUMA affinity and PCI switch sharing of named devices, NVLink where the file has it
// and nowhere else. The NCCL_GRAPH_FILE fixture is refused as not a topology.
#include <gtest/gtest.h>

#include "tests/unit/topology_fixtures.h"

namespace myriad {
namespace {

using namespace test;  // NOLINT: the fixture helpers

#ifdef MYRIAD_HAVE_PUGIXML

TEST(NcclXml, AzureNdv2PartialFileHasNoSwitchesAndNoNvlink) {
  Topology t = loadFixture("azure-ndv2-v100-nccl-topo.xml");
  // the hybrid cube-mesh is real but not in the file
  expectCounts(t, {.gpus = 8, .nics = 1, .numa = 2, .nvlinks = 0, .switches = 0});
  EXPECT_EQ(numaOfBus(t, "0101:00:00.0"), 0);
  EXPECT_EQ(kindOfBus(t, "0101:00:00.0"), NodeKind::kNic);
  EXPECT_EQ(numaOfBus(t, "0004:00:00.0"), 0);
  EXPECT_EQ(numaOfBus(t, "0005:00:00.0"), 1);
  const Link& first = t.links[0];
  EXPECT_EQ(first.pcieGen, 4);
  EXPECT_EQ(first.pcieWidth, 16);
}

TEST(NcclXml, AzureNdv4FourPlaceholderSwitchesOfTwoGpusAndTwoNics) {
  Topology t = loadFixture("azure-ndv4-a100-nccl-topo.xml");
  expectCounts(t, {.gpus = 8, .nics = 8, .numa = 4, .nvlinks = 0, .switches = 4});
  EXPECT_EQ(numaOfBus(t, "0003:00:00.0"), 0);
  EXPECT_EQ(numaOfBus(t, "0001:00:00.0"), 1);
  EXPECT_EQ(numaOfBus(t, "000d:00:00.0"), 2);
  EXPECT_EQ(numaOfBus(t, "000b:00:00.0"), 3);
  EXPECT_EQ(parentOfBus(t, "0003:00:00.0"), t.findBusId("ffff:ff:01.0"));
  EXPECT_EQ(parentOfBus(t, "0103:00:00.0"), t.findBusId("ffff:ff:01.0"));
}

TEST(NcclXml, AzureNdv5EightSwitchesOfOneGpuAndOneNic) {
  Topology t = loadFixture("azure-ndv5-h100-nccl-topo.xml");
  expectCounts(t, {.gpus = 8, .nics = 8, .numa = 2, .nvlinks = 0, .switches = 8});
  EXPECT_EQ(parentOfBus(t, "0008:00:00.0"), parentOfBus(t, "0104:00:00.0"));
  EXPECT_EQ(numaOfBus(t, "0008:00:00.0"), 0);
  EXPECT_EQ(numaOfBus(t, "000c:00:00.0"), 1);
  EXPECT_EQ(numaOfBus(t, "0108:00:00.0"), 1);
}

TEST(NcclXml, AzureNcv4SelfNvlinksAreDroppedAndTheCpuLevelNicIsKept) {
  Topology t = loadFixture("azure-ncv4-a100pcie-nccl-topo.xml");
  // each <nvlink> targets the GPU itself, so none is a link
  expectCounts(t, {.gpus = 4, .numa = 4, .nvlinks = 0});
  for (int numa = 0; numa < 4; ++numa) {
    int gpu = t.findGpu(numa);
    ASSERT_GE(gpu, 0) << numa;
    EXPECT_EQ(t.nodes[gpu].numa, numa);
    EXPECT_EQ(t.nodes[gpu].sm, 80);
  }
  ASSERT_EQ(t.count(NodeKind::kNic), 1);
  int eth = t.findNic("eth0");
  ASSERT_GE(eth, 0);
  EXPECT_TRUE(t.nodes[eth].busId.empty());
  EXPECT_EQ(t.nodes[eth].numa, 0);
  EXPECT_EQ(t.nodes[eth].ports[0].speedMbps, 100000);
  EXPECT_EQ(t.links[0].pcieGen, 0);  // link_speed="" link_width="0"
}

TEST(NcclXml, AzureNcv4GraphFileIsRefusedAsNotATopology) {
  Result<Topology> r = loadTopologyFile(test::fixturePath("azure-ncv4-a100pcie-nccl-graph.xml"));
  ASSERT_FALSE(r.isOk());
  EXPECT_EQ(r.status().code(), Code::kInvalidArgument);
  const std::string& m = r.status().message();
  EXPECT_NE(m.find("azure-ncv4-a100pcie-nccl-graph.xml:1:"), std::string::npos) << m;
  EXPECT_NE(m.find("NCCL_GRAPH_FILE"), std::string::npos) << m;
  EXPECT_NE(m.find("not a topology"), std::string::npos) << m;
}

void expectP4Shape(const Topology& t, uint16_t gpuDevice) {
  expectCounts(t, {.gpus = 8, .nics = 4, .numa = 2, .nvlinks = 0, .switches = 4});
  EXPECT_EQ(parentOfBus(t, "0000:10:1c.0"), parentOfBus(t, "0000:10:1b.0"));
  EXPECT_NE(parentOfBus(t, "0000:10:1c.0"), parentOfBus(t, "0000:20:1b.0"));
  EXPECT_EQ(numaOfBus(t, "0000:20:1d.0"), 0);
  EXPECT_EQ(numaOfBus(t, "0000:90:1c.0"), 1);
  EXPECT_EQ(numaOfBus(t, "0000:a0:1b.0"), 1);
  EXPECT_EQ(t.nodes[t.findBusId("0000:a0:1b.0")].vendor, 0x1d0f);  // EFA
  EXPECT_EQ(t.nodes[t.findBusId("0000:10:1c.0")].device, gpuDevice);
  int gpu = t.findBusId("0000:10:1c.0");
  for (const Link& l : t.links) {
    if (l.b == gpu) {
      EXPECT_NEAR(l.gbps, 15.76, 0.01);  // 8 GT/s x16
    }
  }
}

TEST(NcclXml, AwsP4dCommentsBeforeTheRootAndAfterElements) {
  expectP4Shape(loadFixture("aws-p4d-24xlarge-a100-nccl-topo.xml"), 0x20b0);
}

TEST(NcclXml, AwsP4deSameShapeWithEightyGigabyteGpus) {
  expectP4Shape(loadFixture("aws-p4de-24xlarge-a100-80gb-nccl-topo.xml"), 0x20b2);
}

TEST(NcclXml, AwsP5ClasslessEndpointsAreNeitherGpusNorNics) {
  Topology t = loadFixture("aws-p5-48xlarge-h100-nccl-topo.xml");
  // GPUs deliberately not listed; the EFA NICs carry no class, so they are plain PCI devices.
  expectCounts(t, {.gpus = 0, .nics = 0, .numa = 2, .nvlinks = 0, .switches = 8});
  EXPECT_EQ(t.count(NodeKind::kPciDevice), 32);
  EXPECT_EQ(numaOfBus(t, "0000:4f:00.0"), 0);
  EXPECT_EQ(numaOfBus(t, "0000:94:00.0"), 1);
  int leaf = t.findBusId("0000:4f:00.0");
  for (const Link& l : t.links) {
    if (l.b == leaf) {
      EXPECT_EQ(l.pcieGen, 5);  // "32 GT/s PCIe/s"
    }
  }
}

TEST(NcclXml, AwsG5BarePciLeavesOnly) {
  Topology t = loadFixture("aws-g5-48xlarge-a10g-nccl-topo.xml");
  EXPECT_EQ(t.count(NodeKind::kGpu), 0);
  EXPECT_EQ(t.count(NodeKind::kNic), 0);
  EXPECT_EQ(t.count(NodeKind::kPciDevice), 9);
  EXPECT_EQ(numaCount(t), 2);
  EXPECT_EQ(numaOfBus(t, "0000:00:16.0"), 0);
  EXPECT_EQ(numaOfBus(t, "0000:00:15.0"), 1);
}

TEST(NcclXml, OciH100FullDumpWithFourNvSwitches) {
  Topology t = loadFixture("oci-bm-gpu-h100-8-nccl-topo.xml");
  expectCounts(t, {.gpus = 8, .nics = 8, .numa = 2, .nvlinks = 32, .nvswitches = 4});
  for (int i = 0; i < 8; ++i) {
    int gi = t.findGpu(i);
    ASSERT_GE(gi, 0);
    EXPECT_EQ(t.nodes[gi].numa, i < 4 ? 0 : 1) << i;
    int links = 0;
    for (const Link& l : t.links) links += l.kind == LinkKind::kNvlink && l.a == gi ? l.count : 0;
    EXPECT_EQ(links, 18) << i;
    for (int j = 0; j < 8; ++j) EXPECT_TRUE(i == j || t.nvlinkConnected(gi, t.findGpu(j)));
  }
  const Link* l = t.nvlinkBetween(t.findGpu(0), t.findBusId("0000:1c:00.0"));
  ASSERT_NE(l, nullptr);
  EXPECT_EQ(l->count, 5);
  EXPECT_EQ(l->gbps, 125);
  int nic = t.findNic("mlx5_0");
  ASSERT_GE(nic, 0);
  EXPECT_EQ(t.findNic("mlx5_1"), nic);  // two ports of one ConnectX-7
  EXPECT_EQ(t.nodes[nic].ports[1].port, 2);
  EXPECT_EQ(t.nodes[nic].ports[0].speedMbps, 180000);
  EXPECT_EQ(t.findNic("mlx5_2"), -1);
  EXPECT_EQ(t.findNic("mlx5_11"), -1);
  EXPECT_EQ(t.nodes[t.findNic("mlx5_17")].numa, 1);
  // GPU 0 and its NIC hang off two sub-switches of one PEX89000.
  int gpuSwitch = parentOfBus(t, "0000:0f:00.0");
  int nicSwitch = parentOfBus(t, "0000:0c:00.0");
  EXPECT_NE(gpuSwitch, nicSwitch);
  EXPECT_EQ(t.nodes[gpuSwitch].parent, t.nodes[nicSwitch].parent);
  EXPECT_EQ(t.nodes[gpuSwitch].parent, t.findBusId("0000:08:00.0"));
}

TEST(NcclXml, OciGpu4FlattenedFileKeepsOnlyTheNumaIdsItNames) {
  Topology t = loadFixture("oci-bm-gpu4-8-a100-nccl-topo.xml");
  expectCounts(t, {.gpus = 8, .nics = 8, .nvlinks = 0});
  std::vector<int> numas;
  for (int i : t.indicesOf(NodeKind::kCpu)) numas.push_back(t.nodes[i].numa);
  EXPECT_EQ(numas, (std::vector<int>{3, 1, 7, 5}));
  EXPECT_EQ(numaOfBus(t, "0000:0f:00.0"), 3);
  EXPECT_EQ(numaOfBus(t, "0000:8d:00.0"), 7);
  EXPECT_EQ(numaOfBus(t, "0000:c3:00.0"), 5);
  EXPECT_EQ(parentOfBus(t, "0000:51:00.0"), parentOfBus(t, "0000:48:00.0"));
}

TEST(NcclXml, OciB4SameShapeOtherBusIds) {
  Topology t = loadFixture("oci-bm-gpu-b4-8-a100-80gb-nccl-topo.xml");
  expectCounts(t, {.gpus = 8, .nics = 8, .numa = 4, .nvlinks = 0});
  EXPECT_EQ(numaOfBus(t, "0000:50:00.0"), 1);
  EXPECT_EQ(numaOfBus(t, "0000:89:00.0"), 7);
  EXPECT_EQ(numaOfBus(t, "0000:d1:00.0"), 5);
}

TEST(NcclXml, RcclMi300xHasNoNvidiaGpusAndNoNvlink) {
  Topology t = loadFixture("rccl-amd-mi300x-8gpu-8nic-topo.xml");
  // <xgmi> is not NVLink
  expectCounts(t, {.gpus = 0, .nics = 8, .numa = 2, .nvlinks = 0, .nvswitches = 0});
  int amd = t.findBusId("0000:0c:00.0");
  ASSERT_GE(amd, 0);
  EXPECT_EQ(t.nodes[amd].pciClass, 0x120000u);
  EXPECT_EQ(t.nodes[amd].vendor, 0x1002);
  EXPECT_EQ(t.nodes[t.findNic("mlx5_0")].numa, 0);
  EXPECT_EQ(t.nodes[t.findNic("mlx5_7")].numa, 1);
  EXPECT_EQ(t.nodes[t.findNic("mlx5_7")].ports[0].speedMbps, 400000);
}

#else

TEST(NcclXml, WithoutPugixmlLoadingIsNotSupported) {
  Result<Topology> r = loadTopologyFile(test::fixturePath("azure-ndv2-v100-nccl-topo.xml"));
  ASSERT_FALSE(r.isOk());
  EXPECT_EQ(r.status().code(), Code::kNotSupported);
  EXPECT_NE(r.status().message().find("without pugixml"), std::string::npos);
}

#endif

}  // namespace
}  // namespace myriad
