// unit tier: detection on the machine the tests run on, checked against what the test reads itself:
// if_nameindex() and /sys/class/net for interfaces on PCI, /sys/devices/system/node for NUMA nodes,
// /sys/bus/pci for NVIDIA display controllers (zero GPUs is fine; more than the bus has is invented).
// Also the JSON of myriad-topo, the sysfs-only detector, and MYRIAD_TOPO_FILE merged with detection.
#include <dirent.h>
#include <gtest/gtest.h>
#include <net/if.h>

#include <climits>
#include <cstdlib>
#include <fstream>
#include <set>

#include "tests/unit/topology_fixtures.h"
#include "tools/topo/topo_report.h"
#include "topology/detect.h"
#include "topology/paths.h"

namespace myriad {
namespace {

std::vector<std::string> entries(const std::string& dir) {
  std::vector<std::string> out;
  if (DIR* d = opendir(dir.c_str())) {
    while (dirent* e = readdir(d)) {
      if (e->d_name[0] != '.') out.push_back(e->d_name);
    }
    closedir(d);
  }
  return out;
}

std::string firstLine(const std::string& path) {
  std::ifstream in(path);
  std::string s;
  std::getline(in, s);
  return s;
}

// Interface name -> the sysfs path of its device, for interfaces whose device is below a PCI root.
std::map<std::string, std::string> pciInterfaces() {
  std::map<std::string, std::string> out;
  struct if_nameindex* names = if_nameindex();
  for (struct if_nameindex* n = names; n && n->if_index != 0; ++n) {
    char buf[PATH_MAX];
    std::string link = std::string("/sys/class/net/") + n->if_name + "/device";
    if (realpath(link.c_str(), buf) && std::string(buf).find("/devices/pci") != std::string::npos)
      out[n->if_name] = buf;
  }
  if (names) if_freenameindex(names);
  return out;
}

int sysfsNumaCount() {
  int n = 0;
  for (const std::string& e : entries("/sys/devices/system/node"))
    n += e.rfind("node", 0) == 0 && e.size() > 4 && isdigit(e[4]);
  return std::max(n, 1);
}

int nvidiaDisplayControllers() {
  int n = 0;
  for (const std::string& d : entries("/sys/bus/pci/devices")) {
    std::string base = "/sys/bus/pci/devices/" + d;
    n += firstLine(base + "/vendor") == "0x10de" && firstLine(base + "/class").rfind("0x03", 0) == 0;
  }
  return n;
}

void expectSane(const Detection& d, const char* which) {
  SCOPED_TRACE(which);
  const Topology& t = d.topo;
  EXPECT_GT(d.cpus, 0);
  EXPECT_EQ(test::numaCount(t), sysfsNumaCount());
  for (int c : t.indicesOf(NodeKind::kCpu)) EXPECT_FALSE(t.nodes[c].affinity.empty()) << "NUMA " << t.nodes[c].numa;
  EXPECT_LE(t.count(NodeKind::kGpu), nvidiaDisplayControllers());  // never invented
  for (const auto& [name, path] : pciInterfaces()) {
    int nic = t.findNic(name);
    ASSERT_GE(nic, 0) << name << " (" << path << ") is on PCI but not in the topology:\n" << t;
    EXPECT_NE(path.find("/" + t.nodes[nic].busId + "/"), std::string::npos) << name << " " << path;
  }
  EXPECT_EQ(t.findNic("lo"), -1);  // not on PCI
  for (const std::string& note : d.notes) std::printf("  %s: %s\n", which, note.c_str());
}

TEST(Detect, ThisMachineMatchesWhatSysfsSays) {
  Result<Detection> d = detectMachine();
  ASSERT_TRUE(d.isOk()) << d.status().toString();
  expectSane(d.value(), "detectMachine");
  Result<Detection> s = detectMachineSysfs();
  ASSERT_TRUE(s.isOk()) << s.status().toString();
  expectSane(s.value(), "detectMachineSysfs");
  EXPECT_EQ(d.value().topo.count(NodeKind::kGpu), s.value().topo.count(NodeKind::kGpu));
  bool noNvml = false;
  for (const std::string& n : d.value().notes) noNvml = noNvml || n.rfind("NVML: no GPU", 0) == 0;
  if (noNvml) {
    EXPECT_EQ(d.value().topo.count(NodeKind::kGpu), 0);
  }
}

TEST(Detect, JsonOfThisMachineHasTheShapeMyriadTopoPrints) {
  Result<Detection> d = detectMachine();
  ASSERT_TRUE(d.isOk());
  const Topology& t = d.value().topo;
  nlohmann::json j = nlohmann::json::parse(topologyJson(t).dump());
  std::printf("%s\n", j.dump(2).c_str());
  ASSERT_TRUE(j["gpus"].is_array());
  ASSERT_TRUE(j["nics"].is_array());
  ASSERT_TRUE(j["rings"].is_array());
  EXPECT_EQ(j["numaNodes"].get<int>(), sysfsNumaCount());
  EXPECT_EQ(j["gpus"].size(), static_cast<size_t>(t.count(NodeKind::kGpu)));
  EXPECT_EQ(j["nics"].size(), static_cast<size_t>(t.count(NodeKind::kNic)));
  for (const auto& [name, path] : pciInterfaces()) {
    (void)path;
    bool listed = false;
    for (const auto& n : j["nics"]) {
      listed = listed || t.findNic(name) == t.findNic(n["name"].get<std::string>());
    }
    EXPECT_TRUE(listed) << name;
  }
  for (const auto& n : j["nics"]) {
    EXPECT_TRUE(n["speedGbps"].is_number());
    EXPECT_TRUE(j["matrix"].contains(n["name"].get<std::string>()));
  }
}

#ifdef MYRIAD_HAVE_PUGIXML

TEST(Detect, JsonOfAFileHasTheIssuesShape) {
  nlohmann::json j = nlohmann::json::parse(topologyJson(test::loadFixture("oci-bm-gpu-h100-8-nccl-topo.xml")).dump());
  ASSERT_EQ(j["gpus"].size(), 8u);
  EXPECT_EQ(j["gpus"][0]["index"], 0);
  EXPECT_EQ(j["gpus"][0]["busId"], "0000:0f:00.0");
  EXPECT_EQ(j["gpus"][0]["numa"], 0);
  EXPECT_EQ(j["gpus"][0]["nic"], "mlx5_0");
  EXPECT_EQ(j["gpus"][4]["nic"], "mlx5_9");
  ASSERT_EQ(j["nics"].size(), 8u);
  EXPECT_EQ(j["nics"][0]["name"], "mlx5_0");
  EXPECT_EQ(j["nics"][0]["speedGbps"], 180.0);
  EXPECT_EQ(j["numaNodes"], 2);
  EXPECT_EQ(j["matrix"]["GPU0"]["GPU1"], "NV18");
  EXPECT_EQ(j["matrix"]["GPU0"]["mlx5_0"], "PIX");
  EXPECT_EQ(j["matrix"]["mlx5_0"]["GPU4"], "SYS");
  ASSERT_EQ(j["rings"].size(), 1u);
  EXPECT_EQ(j["rings"][0].size(), 8u);
  EXPECT_EQ(cpuListFromMask("00000000,000fffff"), "0-19");
  EXPECT_EQ(cpuListFromMask("0x000000ff,,0x000000ff"), "0-7,64-71");
  std::string dot = topologyDot(test::loadFixture("oci-bm-gpu-h100-8-nccl-topo.xml"));
  EXPECT_NE(dot.find("graph topology {"), std::string::npos);
  EXPECT_NE(dot.find("NV5"), std::string::npos);
}

TEST(Detect, TopoFileIsCompletedByDetection) {
  Topology file = test::loadFixture("azure-ndv2-v100-nccl-topo.xml");
  Topology detected;
  Node cpu;
  cpu.kind = NodeKind::kCpu;
  cpu.numa = 1;
  int c = detected.add(cpu);
  Node gpu;
  gpu.kind = NodeKind::kGpu;
  gpu.parent = c;
  gpu.busId = "0005:00:00.0";
  gpu.gpuIndex = 4;
  gpu.sm = 70;
  int g = detected.add(gpu);
  Node nic;
  nic.kind = NodeKind::kNic;
  nic.parent = c;
  nic.numa = 1;
  nic.busId = "0201:00:00.0";
  nic.ports.push_back(NicPort{"mlx5_9", 1, 100000});
  int n = detected.add(nic);
  detected.links.push_back(Link{LinkKind::kPcie, c, g, 3, 16, 0, 15.76});
  detected.links.push_back(Link{LinkKind::kPcie, c, n, 3, 16, 0, 15.76});
  Topology merged = mergeDetected(file, detected);
  int mg = merged.findBusId("0005:00:00.0");
  ASSERT_GE(mg, 0);
  EXPECT_EQ(merged.nodes[mg].gpuIndex, 4);
  EXPECT_EQ(merged.nodes[mg].sm, 70);
  EXPECT_EQ(merged.nodes[mg].parent, file.nodes[file.findBusId("0005:00:00.0")].parent);  // the file's place wins
  int mn = merged.findNic("mlx5_9");
  ASSERT_GE(mn, 0);
  EXPECT_EQ(merged.nodes[mn].numa, 1);
  EXPECT_EQ(merged.count(NodeKind::kNic), 2);
  EXPECT_EQ(merged.count(NodeKind::kGpu), 8);
}

TEST(Detect, LocalTopologyFromAFileKeepsTheFileAndAddsThisMachinesNics) {
  Result<Topology> r = localTopology(test::fixturePath("oci-bm-gpu-h100-8-nccl-topo.xml"));
  ASSERT_TRUE(r.isOk()) << r.status().toString();
  EXPECT_EQ(r.value().count(NodeKind::kGpu), 8);
  EXPECT_GE(r.value().count(NodeKind::kNic), 8);
  Result<Topology> bad = localTopology(test::fixturePath("azure-ncv4-a100pcie-nccl-graph.xml"));
  ASSERT_FALSE(bad.isOk());
  EXPECT_NE(bad.status().message().find("MYRIAD_TOPO_FILE"), std::string::npos) << bad.status().message();
  EXPECT_NE(bad.status().message().find("azure-ncv4-a100pcie-nccl-graph.xml"), std::string::npos);
}

#endif

}  // namespace
}  // namespace myriad
