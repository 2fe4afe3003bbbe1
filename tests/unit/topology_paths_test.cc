// unit tier: paths and rails on every topology fixture, against facts read off each file by hand: which
// GPU pairs are NVLink-connected (NV#) and which are not, each GPU's nearest NIC and its path type, the
// NIC of host-memory ranks per NUMA node. Files without GPUs or NVLink get none; the AMD file has no GPU.
#include <gtest/gtest.h>

#include <set>

#include "tests/unit/topology_fixtures.h"
#include "topology/paths.h"

namespace myriad {
namespace {

#ifdef MYRIAD_HAVE_PUGIXML

using namespace test;  // NOLINT: the fixture helpers

std::string pathOf(const Topology& t, const std::string& a, const std::string& b) {
  int x = t.findBusId(a), y = t.findBusId(b);
  EXPECT_TRUE(x >= 0 && y >= 0) << a << " " << b;
  return x < 0 || y < 0 ? "" : pathName(pathBetween(t, x, y));
}

// GPU bus id -> the bus id of its preferred NIC.
std::map<std::string, std::string> railOf(const Topology& t) {
  std::map<std::string, std::string> out;
  std::vector<int> gpus = orderedGpus(t);
  std::vector<int> nics = preferredNics(t);
  for (size_t i = 0; i < gpus.size(); ++i) out[t.nodes[gpus[i]].busId] = nics[i] < 0 ? "" : t.nodes[nics[i]].busId;
  return out;
}

void expectRails(const Topology& t, const std::map<std::string, std::string>& want, const std::string& type) {
  std::map<std::string, std::string> got = railOf(t);
  EXPECT_EQ(got, want);
  for (const auto& [gpu, nic] : want) EXPECT_EQ(pathOf(t, gpu, nic), type) << gpu << " - " << nic;
}

int nvlinkedPairs(const Topology& t) {
  int n = 0;
  std::vector<int> g = orderedGpus(t);
  for (size_t i = 0; i < g.size(); ++i) {
    for (size_t j = i + 1; j < g.size(); ++j) n += pathBetween(t, g[i], g[j]).type == PathType::kNvl;
  }
  return n;
}

TEST(Paths, AzureNdv2OneNicOnNumaZeroAndNoNvlink) {
  Topology t = loadFixture("azure-ndv2-v100-nccl-topo.xml");
  EXPECT_EQ(nvlinkedPairs(t), 0);  // the cube-mesh is not in the file
  // Every device is its own PCI domain (a host bridge of its own): NODE within a NUMA node.
  EXPECT_EQ(pathOf(t, "0001:00:00.0", "0101:00:00.0"), "NODE");
  EXPECT_EQ(pathOf(t, "0001:00:00.0", "0002:00:00.0"), "NODE");
  EXPECT_EQ(pathOf(t, "0005:00:00.0", "0101:00:00.0"), "SYS");
  EXPECT_EQ(pathOf(t, "0001:00:00.0", "0005:00:00.0"), "SYS");
  for (const auto& [gpu, nic] : railOf(t)) EXPECT_EQ(nic, "0101:00:00.0") << gpu;
  EXPECT_EQ(nicName(t, t.findBusId("0101:00:00.0")), "NIC0");  // class only, no name in the file
}

TEST(Paths, AzureNdv4TwoGpusShareASwitchWithTwoNicsOneEach) {
  Topology t = loadFixture("azure-ndv4-a100-nccl-topo.xml");
  EXPECT_EQ(nvlinkedPairs(t), 0);
  std::map<std::string, std::string> rails = railOf(t);
  std::set<std::string> used;
  for (const auto& [gpu, nic] : rails) {
    EXPECT_EQ(pathOf(t, gpu, nic), "PIX") << gpu;
    EXPECT_EQ(parentOfBus(t, gpu), parentOfBus(t, nic)) << gpu;
    used.insert(nic);
  }
  EXPECT_EQ(used.size(), 8u);  // balanced: each of the 8 NICs serves one GPU
  EXPECT_EQ(pathOf(t, "0003:00:00.0", "0004:00:00.0"), "PIX");
  EXPECT_EQ(pathOf(t, "0003:00:00.0", "0001:00:00.0"), "SYS");
}

TEST(Paths, AzureNdv5OneGpuAndOneNicPerSwitch) {
  Topology t = loadFixture("azure-ndv5-h100-nccl-topo.xml");
  EXPECT_EQ(nvlinkedPairs(t), 0);
  expectRails(t,
              {{"0001:00:00.0", "0101:00:00.0"},
               {"0002:00:00.0", "0102:00:00.0"},
               {"0003:00:00.0", "0103:00:00.0"},
               {"0008:00:00.0", "0104:00:00.0"},
               {"0009:00:00.0", "0105:00:00.0"},
               {"000a:00:00.0", "0106:00:00.0"},
               {"000b:00:00.0", "0107:00:00.0"},
               {"000c:00:00.0", "0108:00:00.0"}},
              "PIX");
  // The placeholder switches ffff:ff:0N.0 share one root bus: one host bridge.
  EXPECT_EQ(pathOf(t, "0001:00:00.0", "0002:00:00.0"), "PHB");
  EXPECT_EQ(pathOf(t, "0001:00:00.0", "0009:00:00.0"), "SYS");
}

TEST(Paths, AzureNcv4TheCpuLevelNicIsPhbFromNumaZeroOnly) {
  Topology t = loadFixture("azure-ncv4-a100pcie-nccl-topo.xml");
  EXPECT_EQ(nvlinkedPairs(t), 0);  // the <nvlink> elements point at the GPU itself
  int eth = t.findNic("eth0");
  std::vector<int> gpus = orderedGpus(t);
  ASSERT_EQ(gpus.size(), 4u);
  EXPECT_EQ(pathName(pathBetween(t, gpus[0], eth)), "PHB");
  for (int k = 1; k < 4; ++k) EXPECT_EQ(pathName(pathBetween(t, gpus[k], eth)), "SYS") << k;
  for (int nic : preferredNics(t)) EXPECT_EQ(nic, eth);
  EXPECT_EQ(nicForHostRank(t, 2, 0), eth);  // the only NIC, though far
}

void expectP4Rails(const Topology& t) {
  EXPECT_EQ(nvlinkedPairs(t), 0);  // NVSwitch not in the file
  expectRails(t,
              {{"0000:10:1c.0", "0000:10:1b.0"},
               {"0000:10:1d.0", "0000:10:1b.0"},
               {"0000:20:1c.0", "0000:20:1b.0"},
               {"0000:20:1d.0", "0000:20:1b.0"},
               {"0000:90:1c.0", "0000:90:1b.0"},
               {"0000:90:1d.0", "0000:90:1b.0"},
               {"0000:a0:1c.0", "0000:a0:1b.0"},
               {"0000:a0:1d.0", "0000:a0:1b.0"}},
              "PIX");
  EXPECT_EQ(pathOf(t, "0000:10:1c.0", "0000:10:1d.0"), "PIX");
  EXPECT_EQ(pathOf(t, "0000:10:1c.0", "0000:20:1c.0"), "PHB");
  EXPECT_EQ(pathOf(t, "0000:10:1c.0", "0000:90:1c.0"), "SYS");
}

TEST(Paths, AwsP4dTwoGpusShareEachEfa) {
  expectP4Rails(loadFixture("aws-p4d-24xlarge-a100-nccl-topo.xml"));
}

TEST(Paths, AwsP4deTwoGpusShareEachEfa) {
  expectP4Rails(loadFixture("aws-p4de-24xlarge-a100-80gb-nccl-topo.xml"));
}

TEST(Paths, AwsP5AndG5ListNoGpusAndNoNics) {
  for (const char* f : {"aws-p5-48xlarge-h100-nccl-topo.xml", "aws-g5-48xlarge-a10g-nccl-topo.xml"}) {
    Topology t = loadFixture(f);
    EXPECT_TRUE(orderedGpus(t).empty()) << f;
    EXPECT_TRUE(preferredNics(t).empty()) << f;
    EXPECT_EQ(nicForHostRank(t, 0, 0), -1) << f;
  }
}

TEST(Paths, OciH100EveryPairNv18AndEachGpuItsOwnNic) {
  Topology t = loadFixture("oci-bm-gpu-h100-8-nccl-topo.xml");
  EXPECT_EQ(nvlinkedPairs(t), 28);
  std::vector<int> g = orderedGpus(t);
  Path p = pathBetween(t, g[0], g[7]);
  EXPECT_EQ(pathName(p), "NV18");  // 5+5+4+4 links to the four NVSwitches
  EXPECT_EQ(p.gbps, 450);
  // GPU and NIC hang off two sub-switches of one PEX89000 (one chip: 1000:c030 throughout).
  expectRails(t,
              {{"0000:0f:00.0", "0000:0c:00.0"},
               {"0000:2d:00.0", "0000:2a:00.0"},
               {"0000:44:00.0", "0000:41:00.0"},
               {"0000:5b:00.0", "0000:58:00.0"},
               {"0000:89:00.0", "0000:86:00.0"},
               {"0000:a8:00.0", "0000:a5:00.0"},
               {"0000:c0:00.0", "0000:bd:00.0"},
               {"0000:d8:00.0", "0000:d5:00.0"}},
              "PIX");
  EXPECT_EQ(pathOf(t, "0000:0f:00.0", "0000:2a:00.0"), "NODE");
  EXPECT_EQ(pathOf(t, "0000:0f:00.0", "0000:86:00.0"), "SYS");
  EXPECT_EQ(nicName(t, t.findBusId("0000:0c:00.0")), "mlx5_0");
  // Host-memory ranks on NUMA 1 spread over its four NICs.
  std::set<int> hostNics;
  for (int local = 0; local < 4; ++local) {
    int nic = nicForHostRank(t, 1, local);
    ASSERT_GE(nic, 0);
    EXPECT_EQ(t.nodes[nic].numa, 1);
    hostNics.insert(nic);
  }
  EXPECT_EQ(hostNics.size(), 4u);
}

void expectOciA100Rails(const Topology& t) {
  EXPECT_EQ(nvlinkedPairs(t), 0);
  std::set<std::string> used;
  for (const auto& [gpu, nic] : railOf(t)) {
    EXPECT_EQ(pathOf(t, gpu, nic), "PIX") << gpu;
    EXPECT_EQ(numaOfBus(t, gpu), numaOfBus(t, nic)) << gpu;
    used.insert(nic);
  }
  EXPECT_EQ(used.size(), 8u);
}

TEST(Paths, OciGpu4EachBridgeTwoGpusTwoNics) {
  Topology t = loadFixture("oci-bm-gpu4-8-a100-nccl-topo.xml");
  expectOciA100Rails(t);
  EXPECT_EQ(pathOf(t, "0000:0f:00.0", "0000:15:00.0"), "PIX");
  EXPECT_EQ(pathOf(t, "0000:0f:00.0", "0000:51:00.0"), "SYS");
  int nic = nicForHostRank(t, 7, 1);
  ASSERT_GE(nic, 0);
  EXPECT_EQ(t.nodes[nic].numa, 7);
}

TEST(Paths, OciB4EachBridgeTwoGpusTwoNics) {
  expectOciA100Rails(loadFixture("oci-bm-gpu-b4-8-a100-80gb-nccl-topo.xml"));
}

TEST(Paths, RcclMi300xHasNoGpuButItsNicsServeHostRanks) {
  Topology t = loadFixture("rccl-amd-mi300x-8gpu-8nic-topo.xml");
  EXPECT_TRUE(orderedGpus(t).empty());
  EXPECT_TRUE(preferredNics(t).empty());
  int nic = nicForHostRank(t, 1, 0);
  ASSERT_GE(nic, 0);
  EXPECT_EQ(t.nodes[nic].numa, 1);
}

TEST(Paths, Dgx2NvlinkWithinEachBaseboardOnly) {
  Topology t = loadFixture("hwloc-nvidia-dgx2h-16xv100-nvswitch.xml");
  std::vector<int> g = orderedGpus(t);
  ASSERT_EQ(g.size(), 16u);
  for (size_t i = 0; i < 16; ++i) {
    for (size_t j = 0; j < 16; ++j) {
      if (i == j) continue;
      Path p = pathBetween(t, g[i], g[j]);
      if (i / 8 == j / 8) {
        EXPECT_EQ(pathName(p), "NV6") << i << "-" << j;  // 6 NVSwitches x 25 GB/s
        EXPECT_EQ(p.gbps, 150);
      } else {
        EXPECT_NE(p.type, PathType::kNvl) << i << "-" << j;  // the trunks are not in the file
      }
    }
  }
  EXPECT_EQ(nvlinkedPairs(t), 2 * 28);
  EXPECT_TRUE(orderedNics(t).empty());
}

TEST(Paths, Power8NvlinkPairsAndSysBetweenSockets) {
  Topology t = loadFixture("hwloc-ibm-power8-4xp100-nvlink.xml");
  std::vector<int> g = orderedGpus(t);
  ASSERT_EQ(g.size(), 4u);
  EXPECT_EQ(pathName(pathBetween(t, g[0], g[1])), "NV2");  // 40 GB/s of 20 GB/s P100 links
  EXPECT_EQ(pathName(pathBetween(t, g[2], g[3])), "NV2");
  EXPECT_EQ(pathName(pathBetween(t, g[0], g[2])), "SYS");
  EXPECT_EQ(pathName(pathBetween(t, g[1], g[3])), "SYS");
  EXPECT_EQ(nvlinkedPairs(t), 2);
}

TEST(Paths, JurecaEachGpuItsHdrNicAcrossTwoSwitchPorts) {
  Topology t = loadFixture("hwloc-jureca-dc-gpu-4xa100-4xhdr.xml");
  EXPECT_EQ(nvlinkedPairs(t), 0);  // no CUDA/NVML OS devices: NVLink is not in the file
  // Root port, then a PEX88000 (1000:c010) whose downstream ports hold the GPU and the NIC; its subsystem
  // 1000:100b is not base mode, so NCCL keeps the ports as switches of their own: PXB.
  expectRails(t,
              {{"0000:03:00.0", "0000:04:00.0"},
               {"0000:44:00.0", "0000:43:00.0"},
               {"0000:84:00.0", "0000:83:00.0"},
               {"0000:c4:00.0", "0000:c3:00.0"}},
              "PXB");
  EXPECT_EQ(nicName(t, t.findBusId("0000:04:00.0")), "mlx5_0");  // the RDMA name before ib0
  EXPECT_EQ(pathOf(t, "0000:03:00.0", "0000:44:00.0"), "SYS");
  EXPECT_EQ(t.nodes[nicForHostRank(t, 3, 5)].busId, "0000:04:00.0");
}

TEST(Paths, MeluxinaV1TwoGpusWithoutANicUseTheNearestPackage) {
  Topology t = loadFixture("hwloc-v1-meluxina-gpu-4xa100-2xhdr.xml");
  EXPECT_EQ(nvlinkedPairs(t), 0);
  std::map<std::string, std::string> rails = railOf(t);
  EXPECT_EQ(rails["0000:44:00.0"], "0000:43:00.0");
  EXPECT_EQ(rails["0000:84:00.0"], "0000:83:00.0");
  EXPECT_EQ(pathOf(t, "0000:44:00.0", "0000:43:00.0"), "PXB");  // as on JURECA: a PEX88000 not in base mode
  // 03:00.0 (NUMA 3, package 0) and c3:00.0 (NUMA 5, package 1) have no NIC on their switch: SYS to the
  // HDR NIC of their own package (mlx5_0 on NUMA 1 is package 0, mlx5_1 on NUMA 7 is package 1).
  EXPECT_EQ(rails["0000:03:00.0"], "0000:43:00.0");
  EXPECT_EQ(rails["0000:c3:00.0"], "0000:83:00.0");
  EXPECT_EQ(pathOf(t, "0000:03:00.0", "0000:43:00.0"), "SYS");
  EXPECT_EQ(pathOf(t, "0000:e1:00.0", "0000:e1:00.1"), "PIX");  // two functions behind one root port (a bridge)
}

TEST(Paths, NamesOfEveryPathType) {
  EXPECT_EQ(pathName(Path{PathType::kSelf, 0, 0}), "X");
  EXPECT_EQ(pathName(Path{PathType::kNvl, 12, 300}), "NV12");
  EXPECT_EQ(pathName(Path{PathType::kPxb, 0, 0}), "PXB");
  EXPECT_EQ(pathName(Path{PathType::kNode, 0, 0}), "NODE");
}

#endif

}  // namespace
}  // namespace myriad
