// unit tier: which PCI bridges count as one switch, by NCCL's Broadcom flattening rule, and the PIX/PXB
// this gives. Each case is a small NCCL XML: one NUMA node, a switch, a GPU and a NIC below it. NCCL
// flattens a bridge only when its full id (vendor, device, subsystem vendor, subsystem device) is a
// Broadcom PEX Gen4/Gen5 in base mode, and only its direct children of the same kind; a GPU and a NIC
// below one switch are PIX, and any path from one switch to another is PXB.
#include <gtest/gtest.h>

#include <string>

#include "tests/unit/topology_fixtures.h"
#include "topology/paths.h"
#include "topology/pci_switch.h"

namespace myriad {
namespace {

using namespace test;  // NOLINT: the fixture helpers

// A bridge element; `ids` holds its vendor/device/subsystem attributes (empty: none known).
std::string bridge(const std::string& busId, const std::string& ids, const std::string& inner) {
  return "<pci busid=\"" + busId + "\" class=\"0x060400\" " + ids +
         " link_speed=\"32.0 GT/s PCIe\" link_width=\"16\">" + inner + "</pci>";
}

std::string ids(const std::string& device, const std::string& subVendor, const std::string& subDevice) {
  return "vendor=\"0x1000\" device=\"" + device + "\" subsystem_vendor=\"" + subVendor + "\" subsystem_device=\"" +
         subDevice + "\"";
}

const std::string kGpu =
    "<pci busid=\"0000:13:00.0\" class=\"0x030200\" vendor=\"0x10de\" device=\"0x2330\" link_speed=\"32.0 GT/s "
    "PCIe\" link_width=\"16\"><gpu dev=\"0\" sm=\"90\" rank=\"0\" gdr=\"1\"/></pci>";
const std::string kNic =
    "<pci busid=\"0000:15:00.0\" class=\"0x020700\" vendor=\"0x15b3\" device=\"0x1021\" link_speed=\"32.0 GT/s "
    "PCIe\" link_width=\"16\"><nic><net name=\"mlx5_0\" dev=\"0\" speed=\"400000\" port=\"1\"/></nic></pci>";

// The upstream port 10:00.0 with two ports below it: 11:00.0 leads to the GPU (through `gpuSide`, which
// wraps kGpu), 14:00.0 holds the NIC.
std::string switchXml(const std::string& upIds, const std::string& downIds, const std::string& gpuSide) {
  std::string body =
      bridge("0000:10:00.0", upIds, bridge("0000:11:00.0", downIds, gpuSide) + bridge("0000:14:00.0", downIds, kNic));
  return "<system version=\"1\"><cpu numaid=\"0\" arch=\"x86_64\" vendor=\"GenuineIntel\">" + body + "</cpu></system>";
}

#ifdef MYRIAD_HAVE_PUGIXML

std::string gpuToNic(const std::string& xml) {
  Result<Topology> r = parseTopology(xml, "inline");
  EXPECT_TRUE(r.isOk()) << r.status().toString();
  if (!r.isOk()) return "";
  const Topology& t = r.value();
  return pathName(pathBetween(t, t.findBusId("0000:13:00.0"), t.findBusId("0000:15:00.0")));
}

const std::string kGen5Up = ids("0xc030", "0x1000", "0x0072");    // PEX89000, base mode, upstream
const std::string kGen5Down = ids("0xc030", "0x1000", "0x1003");  // PEX89000, base mode, a port below

TEST(PciSwitch, Gen5BaseModeSubSwitchesAreOneSwitch) {
  // The OCI BM.GPU.H100.8 shape: GPU and NIC each below a sub-switch of one PEX89000.
  EXPECT_EQ(gpuToNic(switchXml(kGen5Up, kGen5Down, kGpu)), "PIX");
}

TEST(PciSwitch, ABaseboardBridgeWithTheSameChipStaysALevel) {
  // The DGX/HGX H100 shape: the GPU baseboard's own bridge below the sub-switch is a PEX89000 too
  // (1000:c030) but with NVIDIA's subsystem id, so NCCL does not flatten it: GPU -> board bridge ->
  // switch <- NIC crosses from one switch to another, PXB (merging by vendor:device said PIX).
  std::string board = bridge("0000:12:00.0", ids("0xc030", "0x10de", "0x13b8"), kGpu);
  EXPECT_EQ(gpuToNic(switchXml(kGen5Up, kGen5Down, board)), "PXB");
}

TEST(PciSwitch, Gen5WithAnotherBoardVendorIsNotFlattened) {
  // The same chip on a board whose subsystem vendor is not Broadcom (Supermicro, 15d9): three levels.
  EXPECT_EQ(gpuToNic(switchXml(ids("0xc030", "0x15d9", "0x0072"), ids("0xc030", "0x15d9", "0x1003"), kGpu)), "PXB");
}

TEST(PciSwitch, Gen5LevelsMustBeInOrder) {
  // The upstream port must carry 0x0XXX and the ports below 0x1XXX; swapped, nothing is flattened.
  EXPECT_EQ(gpuToNic(switchXml(kGen5Down, kGen5Up, kGpu)), "PXB");
}

TEST(PciSwitch, Gen4BaseModeIsFlattenedAndOtherModesAreNot) {
  // PEX88000 in base mode carries subsystem device 0xaXXX at every level.
  EXPECT_EQ(gpuToNic(switchXml(ids("0xc010", "0x1000", "0xa064"), ids("0xc010", "0x1000", "0xa064"), kGpu)), "PIX");
  // JURECA-DC's PEX88000s carry 1000:100b: not base mode, so each port is a switch level (PXB).
  EXPECT_EQ(gpuToNic(switchXml(ids("0xc010", "0x1000", "0x100b"), ids("0xc010", "0x1000", "0x100b"), kGpu)), "PXB");
}

TEST(PciSwitch, UnknownIdsAndOtherVendorsAreLevelsOfTheirOwn) {
  EXPECT_EQ(gpuToNic(switchXml("", "", kGpu)), "PXB");
  std::string plx = "vendor=\"0x10b5\" device=\"0x8725\"";  // a PLX switch, merged by vendor:device before
  EXPECT_EQ(gpuToNic(switchXml(plx, plx, kGpu)), "PXB");
}

TEST(PciSwitch, SubsystemIdsSurviveTheNcclXmlRoundTrip) {
  Result<Topology> r = parseTopology(switchXml(kGen5Up, kGen5Down, kGpu), "inline");
  ASSERT_TRUE(r.isOk()) << r.status().toString();
  const Node& up = r.value().nodes[r.value().findBusId("0000:10:00.0")];
  EXPECT_EQ(up.subsystemVendor, 0x1000);
  EXPECT_EQ(up.subsystemDevice, 0x0072);
  Result<Topology> back = parseTopology(writeNcclXml(r.value()), "written");
  ASSERT_TRUE(back.isOk()) << back.status().toString();
  EXPECT_EQ(back.value(), r.value());
}

TEST(PciSwitch, HwlocPciTypeCarriesTheSubsystemIds) {
  Topology t = loadFixture("hwloc-jureca-dc-gpu-4xa100-4xhdr.xml");
  const Node& n = t.nodes[t.findBusId("0000:41:00.0")];  // pci_type="0604 [1000:c010] [1000:100b] b0"
  EXPECT_EQ(n.subsystemVendor, 0x1000);
  EXPECT_EQ(n.subsystemDevice, 0x100b);
  EXPECT_EQ(broadcomPexGeneration(n, false), 0);
}

#endif

// A chain of four Gen4 base-mode bridges A > B > C > D: A absorbs B; C, now below A, is a switch of its own
// and absorbs D (NCCL fuses only direct children, and a fused switch never fuses again).
TEST(PciSwitch, OnlyDirectChildrenAreAbsorbed) {
  Topology t;
  Node cpu;
  cpu.kind = NodeKind::kCpu;
  cpu.numa = 0;
  int parent = t.add(cpu);
  std::vector<int> chain;
  for (int k = 0; k < 4; ++k) {
    Node b;
    b.kind = NodeKind::kPciSwitch;
    b.parent = parent;
    b.vendor = kBroadcomVendor;
    b.device = kPex88000;
    b.subsystemVendor = kBroadcomVendor;
    b.subsystemDevice = 0xa064;
    parent = t.add(b);
    chain.push_back(parent);
  }
  std::vector<int> level = switchLevels(t);
  EXPECT_EQ(level[chain[0]], chain[0]);
  EXPECT_EQ(level[chain[1]], chain[0]);
  EXPECT_EQ(level[chain[2]], chain[2]);
  EXPECT_EQ(level[chain[3]], chain[2]);
  EXPECT_EQ(level[0], 0);  // not a bridge: itself
}

TEST(PciSwitch, GenerationNeedsAllFourIds) {
  Node n;
  n.vendor = kBroadcomVendor;
  n.device = kPex89000;
  EXPECT_EQ(broadcomPexGeneration(n, false), 0);  // subsystem unknown
  n.subsystemVendor = kBroadcomVendor;
  EXPECT_EQ(broadcomPexGeneration(n, false), 5);  // subsystem device 0x0000 is base mode, upstream
  EXPECT_EQ(broadcomPexGeneration(n, true), 0);
  n.subsystemDevice = 0x1003;
  EXPECT_EQ(broadcomPexGeneration(n, true), 5);
  n.device = kPex88000;
  EXPECT_EQ(broadcomPexGeneration(n, true), 0);
  n.subsystemDevice = 0xa000;
  EXPECT_EQ(broadcomPexGeneration(n, true), 4);
  EXPECT_EQ(broadcomPexGeneration(n, false), 4);
}

}  // namespace
}  // namespace myriad
