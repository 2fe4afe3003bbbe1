// unit tier: NCCL XML round trip (load -> write -> load gives an equal Topology) for every NCCL fixture,
// and hostile input: every fixture cut at many points, random bytes and byte flips give errors that name
// the file and line, never a crash (meaningful under ASan/UBSan too: no reads past what was given); files
// that still parse after byte flips go through every path, rail and ring query.
#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <random>
#include <sstream>

#include "tests/unit/topology_fixtures.h"
#include "topology/search.h"

namespace myriad {
namespace {

#ifdef MYRIAD_HAVE_PUGIXML

const std::vector<std::string> kNcclFiles = {
    "azure-ndv2-v100-nccl-topo.xml",           "azure-ndv4-a100-nccl-topo.xml",
    "azure-ndv5-h100-nccl-topo.xml",           "azure-ncv4-a100pcie-nccl-topo.xml",
    "aws-p4d-24xlarge-a100-nccl-topo.xml",     "aws-p4de-24xlarge-a100-80gb-nccl-topo.xml",
    "aws-p5-48xlarge-h100-nccl-topo.xml",      "aws-g5-48xlarge-a10g-nccl-topo.xml",
    "oci-bm-gpu-h100-8-nccl-topo.xml",         "oci-bm-gpu4-8-a100-nccl-topo.xml",
    "oci-bm-gpu-b4-8-a100-80gb-nccl-topo.xml", "rccl-amd-mi300x-8gpu-8nic-topo.xml"};

const std::vector<std::string> kHwlocFiles = {
    "hwloc-nvidia-dgx2h-16xv100-nvswitch.xml", "hwloc-ibm-power8-4xp100-nvlink.xml",
    "hwloc-jureca-dc-gpu-4xa100-4xhdr.xml", "hwloc-v1-meluxina-gpu-4xa100-2xhdr.xml"};

std::string readFixture(const std::string& name) {
  std::ifstream in(test::fixturePath(name), std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  EXPECT_FALSE(s.str().empty()) << name;
  return s.str();
}

// An error must start with "name:LINE: ".
void expectNamedError(const Status& s, const std::string& name) {
  EXPECT_EQ(s.code(), Code::kInvalidArgument) << s.toString();
  const std::string& m = s.message();
  ASSERT_EQ(m.rfind(name + ":", 0), 0u) << m;
  ASSERT_GT(m.size(), name.size() + 1);
  EXPECT_TRUE(std::isdigit(static_cast<unsigned char>(m[name.size() + 1]))) << m;
}

// Every query over every device pair; the results are checked elsewhere, here only that they return.
void exerciseQueries(const Topology& t) {
  std::vector<int> devices = orderedGpus(t);
  std::vector<int> nics = orderedNics(t);
  devices.insert(devices.end(), nics.begin(), nics.end());
  for (int a : devices) {
    for (int b : devices) EXPECT_FALSE(pathName(pathBetween(t, a, b)).empty());
  }
  EXPECT_EQ(preferredNics(t).size(), orderedGpus(t).size());
  for (int c : t.indicesOf(NodeKind::kCpu)) nicForHostRank(t, t.nodes[c].numa, 3);
  if (orderedGpus(t).size() <= 9) {  // the 16-GPU heuristic is covered once, in Search.*
    EXPECT_EQ(searchRing(t).gpus.size(), orderedGpus(t).size());
  }
}

TEST(TopologyFile, NcclRoundTripGivesAnEqualTopology) {
  for (const std::string& name : kNcclFiles) {
    SCOPED_TRACE(name);
    Topology first = test::loadFixture(name);
    ASSERT_FALSE(first.nodes.empty());
    std::string xml = writeNcclXml(first);
    Result<Topology> second = parseTopology(xml, name + " (written)");
    ASSERT_TRUE(second.isOk()) << second.status().toString() << "\n" << xml;
    EXPECT_EQ(first, second.value()) << "first:\n" << first << "second:\n" << second.value() << "xml:\n" << xml;
    EXPECT_EQ(writeNcclXml(second.value()), xml);
  }
}

// hwloc gives NVLinks as bandwidths and may give an NVSwitch no PCI class: written as NCCL XML they still
// read back (counts from the bandwidth, the kinds' classes), and writing what was read gives the same file.
// (Found by the topology fuzz target: NVLink counts of 0 and NVSwitches turned into plain PCI devices.)
TEST(TopologyFile, HwlocWrittenAsNcclXmlReadsBackAsWritten) {
  for (const std::string& name : kHwlocFiles) {
    SCOPED_TRACE(name);
    Topology first = test::loadFixture(name);
    std::string xml = writeNcclXml(first);
    Result<Topology> second = parseTopology(xml, name + " (written)");
    ASSERT_TRUE(second.isOk()) << second.status().toString();
    EXPECT_EQ(writeNcclXml(second.value()), xml);
    EXPECT_EQ(second.value().count(NodeKind::kNvSwitch), first.count(NodeKind::kNvSwitch));
    size_t nvlinks = 0;
    for (const Link& l : first.links) nvlinks += l.kind == LinkKind::kNvlink;
    size_t nvlinksBack = 0;
    for (const Link& l : second.value().links) nvlinksBack += l.kind == LinkKind::kNvlink;
    EXPECT_EQ(nvlinksBack, nvlinks);
  }
}

TEST(TopologyFile, EveryTruncationIsANamedError) {
  std::vector<std::string> all = kNcclFiles;
  all.insert(all.end(), kHwlocFiles.begin(), kHwlocFiles.end());
  for (const std::string& name : all) {
    std::string text = readFixture(name);
    size_t lastTag = text.rfind('>');
    size_t step = text.size() < 8192 ? 1 : text.size() / 400;  // small files at every byte
    for (size_t cut = 0; cut < lastTag; cut += step) {
      Result<Topology> r = parseTopology(std::string_view(text).substr(0, cut), name);
      ASSERT_FALSE(r.isOk()) << name << " cut at " << cut;
      expectNamedError(r.status(), name);
    }
  }
}

TEST(TopologyFile, RandomBytesAndFlippedBytesNeverCrash) {
  std::mt19937 rng(12345);
  for (int i = 0; i < 300; ++i) {
    std::string junk(rng() % 2048, '\0');
    for (char& c : junk) c = static_cast<char>(rng());
    if (i % 3 == 0) junk = "<system version=\"1\">" + junk;
    if (i % 3 == 1) junk = "<topology version=\"2.0\"><object type=\"NUMANode\" os_index=\"0\">" + junk;
    Result<Topology> r = parseTopology(junk, "junk");
    ASSERT_FALSE(r.isOk()) << "seed 12345 case " << i;
    expectNamedError(r.status(), "junk");
  }
  std::vector<std::string> all = kNcclFiles;
  all.insert(all.end(), kHwlocFiles.begin(), kHwlocFiles.end());
  const char kXmlish[] = "<>/=\"' x0123456789abcdef:.-";
  for (const std::string& name : all) {
    std::string text = readFixture(name);
    for (int i = 0; i < 60; ++i) {
      std::string bent = text;
      for (int k = 0; k < 4; ++k) bent[rng() % bent.size()] = kXmlish[rng() % (sizeof(kXmlish) - 1)];
      Result<Topology> r = parseTopology(bent, name);
      if (!r.isOk()) {
        expectNamedError(r.status(), name);
        continue;
      }
      // Some flips leave a valid file: whatever it says, paths, rails and rings must not crash on it.
      exerciseQueries(r.value());
    }
  }
}

TEST(TopologyFile, SemanticErrorsNameTheLineAndWhatWasExpected) {
  struct Case {
    const char* xml;
    const char* needle;
  };
  const Case cases[] = {
      {"<system>\n</system>", "f.xml:1: <system> without version"},
      {"<system version=\"1\">\n<cpu/>\n</system>", "f.xml:2: <cpu> without numaid"},
      {"<system version=\"1\">\n<cpu numaid=\"x\"/>\n</system>", "f.xml:2: <cpu> numaid=\"x\": expected an integer"},
      {"<system version=\"1\"><cpu numaid=\"0\">\n<pci busid=\"0:0\"/></cpu></system>", "f.xml:2: <pci> busid"},
      {"<system version=\"1\"><cpu numaid=\"0\">\n\n<pci busid=\"0000:01:00.0\" class=\"0xzz\"/></cpu></system>",
       "f.xml:3: <pci> class=\"0xzz\": expected a hexadecimal"},
      {"<system version=\"1\"><cpu numaid=\"0\"><pci busid=\"0000:01:00.0\"/>\n<pci busid=\"0000:01:00.0\"/>"
       "</cpu></system>",
       "f.xml:2: bus id 0000:01:00.0 appears twice"},
      {"<hello/>", "f.xml:1: root element <hello>: expected <system>"},
      {"", "f.xml:1: malformed XML"},
      {"<system version=\"1\">\n<cpu numaid=\"0\">\n", "f.xml:2: malformed XML"},
  };
  for (const Case& c : cases) {
    Result<Topology> r = parseTopology(c.xml, "f.xml");
    ASSERT_FALSE(r.isOk()) << c.xml;
    EXPECT_NE(r.status().message().find(c.needle), std::string::npos) << r.status().message();
  }
  // Well-formed but absurdly deep trees are refused before they can exhaust the stack.
  std::string deep = "<system version=\"1\"><cpu numaid=\"0\">";
  std::string hwloc = "<topology version=\"2.0\"><object type=\"NUMANode\" os_index=\"0\"/>";
  for (int i = 0; i < 5000; ++i) {
    char bus[32];
    std::snprintf(bus, sizeof(bus), "0000:%02x:%02x.0", i / 256, i % 256);
    deep += std::string("<pci busid=\"") + bus + "\">";
    hwloc += "<object type=\"Group\">";
  }
  for (int i = 0; i < 5000; ++i) {
    deep += "</pci>";
    hwloc += "</object>";
  }
  deep += "</cpu></system>";
  hwloc += "</topology>";
  for (const std::string& text : {deep, hwloc}) {
    Result<Topology> r = parseTopology(text, "deep.xml");
    ASSERT_FALSE(r.isOk());
    EXPECT_NE(r.status().message().find("nested too deep"), std::string::npos) << r.status().message();
  }
}

TEST(TopologyFile, MissingFileIsASystemErrorNamingThePath) {
  Result<Topology> r = loadTopologyFile("/nonexistent/topo.xml");
  ASSERT_FALSE(r.isOk());
  EXPECT_EQ(r.status().code(), Code::kSystemError);
  EXPECT_NE(r.status().message().find("/nonexistent/topo.xml"), std::string::npos);
}

#endif

}  // namespace
}  // namespace myriad
