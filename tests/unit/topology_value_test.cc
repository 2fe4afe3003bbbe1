// unit tier: the Topology value itself: link bandwidth tables, bus id spelling, equality and printing,
// and NVLink connectivity through an NVSwitch.
#include <gtest/gtest.h>

#include "topology/link_speed.h"
#include "topology/pci.h"
#include "topology/topology.h"

namespace myriad {
namespace {

TEST(LinkSpeed, PcieGenerationFromEverySpellingInTheFixtures) {
  EXPECT_EQ(pcieGenFromSpeed("16.0 GT/s PCIe"), 4);
  EXPECT_EQ(pcieGenFromSpeed("32 GT/s PCIe/s"), 5);
  EXPECT_EQ(pcieGenFromSpeed("8 GT/s"), 3);
  EXPECT_EQ(pcieGenFromSpeed("5.0 GT/s PCIe"), 2);
  EXPECT_EQ(pcieGenFromSpeed("2.5 GT/s"), 1);
  EXPECT_EQ(pcieGenFromSpeed(""), 0);
  EXPECT_EQ(pcieGenFromSpeed("fast"), 0);
  EXPECT_EQ(pcieGenFromSpeed("12 GT/s"), 0);
  EXPECT_NEAR(pcieGbps(4, 16), 31.5, 0.1);
  EXPECT_NEAR(pcieGbps(3, 16), 15.76, 0.1);
  EXPECT_EQ(pcieGbps(0, 16), 0);
  EXPECT_EQ(pcieGbps(4, 0), 0);
  EXPECT_EQ(pcieGenFromSpeed(pcieSpeedName(5)), 5);
  EXPECT_EQ(nvlinkGbpsPerLink(90) * 18, 450);
  EXPECT_EQ(nvlinkGbpsPerLink(80) * 12, 300);
  EXPECT_EQ(nvlinkGbpsPerLink(0), 0);
}

TEST(Pci, BusIdsAreNormalisedOrRejected) {
  EXPECT_EQ(normalizeBusId("0000:0F:00.0").value_or(""), "0000:0f:00.0");
  EXPECT_EQ(normalizeBusId("ffffffff:ff:ff.f").value_or(""), "ffffffff:ff:ff.f");
  EXPECT_FALSE(normalizeBusId(""));
  EXPECT_FALSE(normalizeBusId("0000:0f:00"));
  EXPECT_FALSE(normalizeBusId("0000:0g:00.0"));
  EXPECT_FALSE(normalizeBusId("000000000:00:00.0"));
  EXPECT_FALSE(normalizeBusId("0000:00:00.0x"));
  EXPECT_EQ(pciKind(0x030200, 0x10de, false), NodeKind::kGpu);
  EXPECT_EQ(pciKind(0x030000, 0x1a03, false), NodeKind::kPciDevice);  // a BMC's VGA is no GPU
  EXPECT_EQ(pciKind(0x020700, 0, false), NodeKind::kNic);
  EXPECT_EQ(pciKind(0x068000, 0x10de, false), NodeKind::kNvSwitch);
  EXPECT_EQ(pciKind(0x120000, 0x1002, false), NodeKind::kPciDevice);
  EXPECT_EQ(pciKind(0, 0, true), NodeKind::kPciSwitch);
  EXPECT_EQ(parseHex("0x1d0f", 0xffff).value_or(0), 0x1d0fu);
  EXPECT_FALSE(parseHex("0x10000", 0xffff));
  EXPECT_FALSE(parseHex("0x", 0xffff));
}

Topology twoGpusOnOneSwitch() {
  Topology t;
  Node cpu;
  cpu.kind = NodeKind::kCpu;
  cpu.numa = 0;
  int c = t.add(cpu);
  for (const char* bus : {"0000:01:00.0", "0000:02:00.0"}) {
    Node g;
    g.kind = NodeKind::kGpu;
    g.parent = c;
    g.busId = bus;
    t.add(g);
  }
  Node s;
  s.kind = NodeKind::kNvSwitch;
  s.busId = "0000:99:00.0";
  int sw = t.add(s);
  for (int g : {1, 2}) t.links.push_back(Link{LinkKind::kNvlink, g, sw, 0, 0, 6, 150});
  return t;
}

TEST(Topology, EqualityQueriesAndPrinting) {
  Topology a = twoGpusOnOneSwitch();
  Topology b = a;
  EXPECT_EQ(a, b);
  EXPECT_TRUE(a.nvlinkConnected(1, 2));
  EXPECT_FALSE(a.nvlinkBetween(1, 2));
  EXPECT_EQ(a.count(NodeKind::kGpu), 2);
  EXPECT_EQ(a.findBusId("0000:02:00.0"), 2);
  EXPECT_EQ(a.findBusId(""), -1);
  b.links.back().count = 5;
  EXPECT_NE(a, b);
  std::string s = toString(a);
  EXPECT_NE(s.find("nvswitch 0000:99:00.0"), std::string::npos) << s;
  EXPECT_NE(s.find("nvlink #2 - #3 x6 150 GB/s"), std::string::npos) << s;
  a.links.pop_back();
  EXPECT_FALSE(a.nvlinkConnected(1, 2));
}

TEST(Topology, CpuInterconnectJoinsEveryPairOfNumaNodes) {
  Topology t;
  for (int i = 0; i < 3; ++i) {
    Node cpu;
    cpu.kind = NodeKind::kCpu;
    cpu.numa = i;
    cpu.cpuVendor = "GenuineIntel";
    t.add(cpu);
  }
  addCpuInterconnect(t);
  ASSERT_EQ(t.links.size(), 3u);
  EXPECT_EQ(t.links[2].a, 1);
  EXPECT_EQ(t.links[2].b, 2);
  EXPECT_GT(t.links[0].gbps, 0);
}

}  // namespace
}  // namespace myriad
