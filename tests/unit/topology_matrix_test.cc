// unit tier: the GPU-GPU and GPU-NIC path-type matrix of every topology fixture (rows: GPUs in CUDA order,
// else bus id order; columns: the GPUs, then the NICs in bus id order). Checked against `nvidia-smi topo -m`
// where a fixture has ground truth for that server, else derived by hand from NCCL's rules on the same
// file: NVLink (directly or through NVSwitches) is NV#; a path that stays below one PCI switch is PIX and
// one that goes from switch to switch is PXB, switches counted after NCCL's Broadcom flattening (only a
// PEX88000/PEX89000 in base mode absorbs its child bridges); a path through one CPU is PHB in NCCL, which
// Myriad writes NODE when the two ends sit below different root buses, as nvidia-smi does; different NUMA
// nodes are SYS.
#include "tests/unit/topology_matrix.h"

#include <gtest/gtest.h>

#include <fstream>
#include <map>
#include <set>
#include <sstream>

namespace myriad {
namespace {

#ifdef MYRIAD_HAVE_PUGIXML

using namespace test;  // NOLINT: the fixture helpers

const char* kSmi = "nvidia-smi-topo-m-8xa100-8xh100-gpuonly.txt";

// The first `n` cells of each row: the GPU-to-GPU block.
std::vector<std::string> gpuBlock(const std::vector<std::string>& rows, size_t n) {
  std::vector<std::string> out;
  for (const std::string& row : rows) {
    std::istringstream cells(row);
    std::string cell, cut;
    for (size_t k = 0; k < n && cells >> cell; ++k) cut += (cut.empty() ? "" : " ") + cell;
    out.push_back(cut);
  }
  return out;
}

std::vector<int> gpuNuma(const Topology& t) {
  std::vector<int> out;
  for (int g : orderedGpus(t)) out.push_back(t.nodes[g].numa);
  return out;
}

// OCI BM.GPU.H100.8 is an 8x H100 SXM5 HGX server like the H100 node of the nvidia-smi ground truth: every
// GPU pair NV18 (5+5+4+4 links to the four NVSwitches), GPUs 0-3 on NUMA 0 and 4-7 on NUMA 1.
TEST(PathMatrix, OciH100MatchesNvidiaSmiAndNcclRules) {
  Topology t = loadFixture("oci-bm-gpu-h100-8-nccl-topo.xml");
  SmiTable smi = nvidiaSmiTable(kSmi, "H100 node");
  EXPECT_EQ(gpuBlock(pathMatrix(t), 8), smi.rows);
  EXPECT_EQ(gpuNuma(t), smi.numa);
  // GPU k and NIC k hang off two sub-switches (subsystem 1000:1003) of one PEX89000 whose upstream port
  // carries 1000:0072: Gen5 base mode, flattened by NCCL into one switch, so PIX. The other NICs of the
  // NUMA node are through the CPU (NCCL PHB; other root buses: NODE), those of the other node SYS.
  const std::vector<std::string> nics = {"PIX NODE NODE NODE SYS SYS SYS SYS", "NODE PIX NODE NODE SYS SYS SYS SYS",
                                         "NODE NODE PIX NODE SYS SYS SYS SYS", "NODE NODE NODE PIX SYS SYS SYS SYS",
                                         "SYS SYS SYS SYS PIX NODE NODE NODE", "SYS SYS SYS SYS NODE PIX NODE NODE",
                                         "SYS SYS SYS SYS NODE NODE PIX NODE", "SYS SYS SYS SYS NODE NODE NODE PIX"};
  std::vector<std::string> want;
  for (size_t g = 0; g < 8; ++g) want.push_back(smi.rows[g] + " " + nics[g]);
  expectMatrix(t, want);
}

// The DGX H100 table maps each GPU to one compute NIC of its own on the GPU's CPU socket, four per socket.
// OCI's H100 server has the same HGX baseboard and wires its rails the same way: each GPU's chosen NIC is
// a different one, on the socket the DGX table gives for that GPU.
TEST(PathMatrix, OciH100RailsHaveTheDgxH100Shape) {
  Topology t = loadFixture("oci-bm-gpu-h100-8-nccl-topo.xml");
  std::ifstream in(fixturePath("nvidia-dgx-h100-compute-nic-gpu-map.txt"));
  std::map<int, int> socketOfGpu;
  for (std::string line; std::getline(in, line);) {
    if (line.empty() || line[0] == '#') continue;
    std::istringstream cells(line);
    std::string port, cx;
    int socket = -1, gpu = -1;
    cells >> port >> cx >> socket >> gpu;
    socketOfGpu[gpu] = socket;
  }
  ASSERT_EQ(socketOfGpu.size(), 8u);
  std::vector<int> gpus = orderedGpus(t);
  std::vector<int> rails = preferredNics(t);
  std::set<int> distinct(rails.begin(), rails.end());
  EXPECT_EQ(distinct.size(), 8u);
  for (size_t g = 0; g < gpus.size(); ++g) {
    EXPECT_EQ(t.nodes[gpus[g]].numa, socketOfGpu[static_cast<int>(g)]) << "GPU" << g;
    EXPECT_EQ(t.nodes[rails[g]].numa, socketOfGpu[static_cast<int>(g)]) << "GPU" << g;
    EXPECT_EQ(pathName(pathBetween(t, gpus[g], rails[g])), "PIX") << "GPU" << g;
  }
}

// AWS p4d/p4de are 8x A100 SXM4 HGX servers like the A100 node of the ground truth, and their GPUs sit on
// the same NUMA nodes (0-3 on 0, 4-7 on 1). The file is partial: NCCL adds the NVLinks from detection at
// run time, so from the file alone GPU pairs are PCI paths. Two GPUs and one EFA share each placeholder
// switch (ids ffff:ffff, not Broadcom: one switch level): PIX; the two switches of a NUMA node are below
// one root bus (ffff:ff): PHB, as NCCL says too.
TEST(PathMatrix, AwsP4dAndP4deMatchTheA100NumaAffinity) {
  for (const char* f : {"aws-p4d-24xlarge-a100-nccl-topo.xml", "aws-p4de-24xlarge-a100-80gb-nccl-topo.xml"}) {
    SCOPED_TRACE(f);
    Topology t = loadFixture(f);
    EXPECT_EQ(gpuNuma(t), nvidiaSmiTable(kSmi, "A100 node").numa);
    expectMatrix(t, {"X PIX PHB PHB SYS SYS SYS SYS PIX PHB SYS SYS", "PIX X PHB PHB SYS SYS SYS SYS PIX PHB SYS SYS",
                     "PHB PHB X PIX SYS SYS SYS SYS PHB PIX SYS SYS", "PHB PHB PIX X SYS SYS SYS SYS PHB PIX SYS SYS",
                     "SYS SYS SYS SYS X PIX PHB PHB SYS SYS PIX PHB", "SYS SYS SYS SYS PIX X PHB PHB SYS SYS PIX PHB",
                     "SYS SYS SYS SYS PHB PHB X PIX SYS SYS PHB PIX", "SYS SYS SYS SYS PHB PHB PIX X SYS SYS PHB PIX"});
  }
}

// JURECA-DC: each A100 and its HDR NIC sit on two downstream ports of a PEX88000 (1000:c010) whose
// subsystem 1000:100b is not Broadcom's base mode (1000:aXXX), so NCCL does not flatten it: GPU -> port ->
// upstream port -> port -> NIC goes from switch to switch, PXB. Every GPU is on its own NUMA node (3, 1,
// 7, 5) and the Intel NICs (e1:00.0/.1) on NUMA 4: everything else is SYS.
TEST(PathMatrix, JurecaGpuAndNicOnANonBaseModePex88000ArePxb) {
  expectMatrix(loadFixture("hwloc-jureca-dc-gpu-4xa100-4xhdr.xml"),
               {"X SYS SYS SYS PXB SYS SYS SYS SYS SYS", "SYS X SYS SYS SYS PXB SYS SYS SYS SYS",
                "SYS SYS X SYS SYS SYS PXB SYS SYS SYS", "SYS SYS SYS X SYS SYS SYS PXB SYS SYS"});
}

// MeluXina: the same PEX88000 (1000:100b) as JURECA, so the two GPUs with an HDR NIC on their switch
// (44:00.0 with 43:00.0, 84:00.0 with 83:00.0) are PXB; 03:00.0 and c3:00.0 have none; all else SYS.
TEST(PathMatrix, MeluxinaV1SameSwitchAsJurecaIsPxb) {
  expectMatrix(loadFixture("hwloc-v1-meluxina-gpu-4xa100-2xhdr.xml"),
               {"X SYS SYS SYS SYS SYS SYS SYS", "SYS X SYS SYS PXB SYS SYS SYS", "SYS SYS X SYS SYS PXB SYS SYS",
                "SYS SYS SYS X SYS SYS SYS SYS"});
}

// Azure NDv2: no switches, every device its own PCI domain below the CPU of its NUMA node (NCCL PHB;
// different root buses: NODE); the one NIC is on NUMA 0. NVLink is not in the file.
TEST(PathMatrix, AzureNdv2FlatPci) {
  expectMatrix(loadFixture("azure-ndv2-v100-nccl-topo.xml"),
               {"X NODE NODE NODE SYS SYS SYS SYS NODE", "NODE X NODE NODE SYS SYS SYS SYS NODE",
                "NODE NODE X NODE SYS SYS SYS SYS NODE", "NODE NODE NODE X SYS SYS SYS SYS NODE",
                "SYS SYS SYS SYS X NODE NODE NODE SYS", "SYS SYS SYS SYS NODE X NODE NODE SYS",
                "SYS SYS SYS SYS NODE NODE X NODE SYS", "SYS SYS SYS SYS NODE NODE NODE X SYS"});
}

// Azure NDv4 and OCI BM.GPU4.8/B4.8: per NUMA node one switch (a placeholder, or a bridge with a class
// only: no ids, never flattened, one level) with two GPUs and two NICs: PIX inside, SYS between.
const std::vector<std::string> kTwoGpusTwoNicsPerNuma = {
    "X PIX SYS SYS SYS SYS SYS SYS PIX PIX SYS SYS SYS SYS SYS SYS",
    "PIX X SYS SYS SYS SYS SYS SYS PIX PIX SYS SYS SYS SYS SYS SYS",
    "SYS SYS X PIX SYS SYS SYS SYS SYS SYS PIX PIX SYS SYS SYS SYS",
    "SYS SYS PIX X SYS SYS SYS SYS SYS SYS PIX PIX SYS SYS SYS SYS",
    "SYS SYS SYS SYS X PIX SYS SYS SYS SYS SYS SYS PIX PIX SYS SYS",
    "SYS SYS SYS SYS PIX X SYS SYS SYS SYS SYS SYS PIX PIX SYS SYS",
    "SYS SYS SYS SYS SYS SYS X PIX SYS SYS SYS SYS SYS SYS PIX PIX",
    "SYS SYS SYS SYS SYS SYS PIX X SYS SYS SYS SYS SYS SYS PIX PIX"};

TEST(PathMatrix, AzureNdv4AndOciA100TwoGpusTwoNicsPerSwitch) {
  for (const char* f : {"azure-ndv4-a100-nccl-topo.xml", "oci-bm-gpu4-8-a100-nccl-topo.xml",
                        "oci-bm-gpu-b4-8-a100-80gb-nccl-topo.xml"}) {
    SCOPED_TRACE(f);
    expectMatrix(loadFixture(f), kTwoGpusTwoNicsPerNuma);
  }
}

// Azure NDv5: eight placeholder switches, each one GPU and one NIC (PIX); the four switches of a NUMA node
// share the root bus ffff:ff (PHB, as in NCCL); the other node SYS.
TEST(PathMatrix, AzureNdv5OneGpuOneNicPerSwitch) {
  expectMatrix(loadFixture("azure-ndv5-h100-nccl-topo.xml"),
               {"X PHB PHB PHB SYS SYS SYS SYS PIX PHB PHB PHB SYS SYS SYS SYS",
                "PHB X PHB PHB SYS SYS SYS SYS PHB PIX PHB PHB SYS SYS SYS SYS",
                "PHB PHB X PHB SYS SYS SYS SYS PHB PHB PIX PHB SYS SYS SYS SYS",
                "PHB PHB PHB X SYS SYS SYS SYS PHB PHB PHB PIX SYS SYS SYS SYS",
                "SYS SYS SYS SYS X PHB PHB PHB SYS SYS SYS SYS PIX PHB PHB PHB",
                "SYS SYS SYS SYS PHB X PHB PHB SYS SYS SYS SYS PHB PIX PHB PHB",
                "SYS SYS SYS SYS PHB PHB X PHB SYS SYS SYS SYS PHB PHB PIX PHB",
                "SYS SYS SYS SYS PHB PHB PHB X SYS SYS SYS SYS PHB PHB PHB PIX"});
}

// Azure NCv4: one A100 PCIe per NUMA node; eth0 hangs off the CPU of NUMA 0 (PHB from GPU0, as in NCCL,
// where a NIC below the CPU is one PCI hop from it), SYS from the others.
TEST(PathMatrix, AzureNcv4OneGpuPerNuma) {
  expectMatrix(loadFixture("azure-ncv4-a100pcie-nccl-topo.xml"),
               {"X SYS SYS SYS PHB", "SYS X SYS SYS SYS", "SYS SYS X SYS SYS", "SYS SYS SYS X SYS"});
}

// POWER8 Minsky: two P100 pairs, each on NVLink (2 x 20 GB/s), the pairs on different sockets. No NICs.
TEST(PathMatrix, Power8NvlinkPairs) {
  expectMatrix(loadFixture("hwloc-ibm-power8-4xp100-nvlink.xml"),
               {"X NV2 SYS SYS", "NV2 X SYS SYS", "SYS SYS X NV2", "SYS SYS NV2 X"});
}

// DGX-2H: 16 V100s, GPUs 0-7 (NUMA 0) and 8-15 (NUMA 1) on two baseboards; each GPU has 6 links of
// 25 GB/s to the 6 NVSwitches of its board: NV6 within a board. The trunks between the boards are not in
// the file, so across boards the path is PCI between NUMA nodes: SYS. No NICs in this file.
TEST(PathMatrix, Dgx2NvlinkWithinEachBaseboard) {
  std::vector<std::string> want;
  for (int i = 0; i < 16; ++i) {
    std::string row;
    for (int j = 0; j < 16; ++j) row += std::string(j ? " " : "") + (i == j ? "X" : i / 8 == j / 8 ? "NV6" : "SYS");
    want.push_back(row);
  }
  expectMatrix(loadFixture("hwloc-nvidia-dgx2h-16xv100-nvswitch.xml"), want);
}

// Files without NVIDIA GPUs give an empty matrix. On the MI300X box, the accelerator (a PCI device here)
// and its NIC are PXB: AMD bridge 1022:1500 and two ConnectX-7 switch bridges 15b3:1979 (subsystem 0000:0000,
// not Broadcom, never flattened) lie between them.
TEST(PathMatrix, FilesWithoutNvidiaGpusAreEmpty) {
  for (const char* f : {"aws-p5-48xlarge-h100-nccl-topo.xml", "aws-g5-48xlarge-a10g-nccl-topo.xml",
                        "rccl-amd-mi300x-8gpu-8nic-topo.xml"}) {
    EXPECT_TRUE(pathMatrix(loadFixture(f)).empty()) << f;
  }
  Topology t = loadFixture("rccl-amd-mi300x-8gpu-8nic-topo.xml");
  EXPECT_EQ(pathName(pathBetween(t, t.findBusId("0000:0c:00.0"), t.findBusId("0000:07:00.0"))), "PXB");
}

#endif

}  // namespace
}  // namespace myriad
