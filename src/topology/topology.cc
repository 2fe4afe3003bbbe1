// Topology queries and printing. The value itself is plain data; everything here only reads it, except
// add(), which keeps the parents-before-children invariant by appending.
#include "topology/topology.h"

#include <sstream>

#include "base/status.h"
#include "topology/link_speed.h"

namespace myriad {

const char* nodeKindName(NodeKind kind) {
  switch (kind) {
    case NodeKind::kCpu: return "cpu";
    case NodeKind::kPciSwitch: return "pci-switch";
    case NodeKind::kGpu: return "gpu";
    case NodeKind::kNic: return "nic";
    case NodeKind::kNvSwitch: return "nvswitch";
    case NodeKind::kPciDevice: return "pci";
  }
  return "?";
}

const char* linkKindName(LinkKind kind) {
  switch (kind) {
    case LinkKind::kPcie: return "pcie";
    case LinkKind::kNvlink: return "nvlink";
    case LinkKind::kCpuInterconnect: return "cpu-link";
  }
  return "?";
}

int Topology::add(Node node) {
  MYR_ASSERT(node.parent < static_cast<int>(nodes.size()));
  nodes.push_back(std::move(node));
  return static_cast<int>(nodes.size()) - 1;
}

std::vector<int> Topology::indicesOf(NodeKind kind) const {
  std::vector<int> out;
  for (size_t i = 0; i < nodes.size(); ++i) {
    if (nodes[i].kind == kind) out.push_back(static_cast<int>(i));
  }
  return out;
}

int Topology::findBusId(const std::string& busId) const {
  for (size_t i = 0; i < nodes.size(); ++i) {
    if (!busId.empty() && nodes[i].busId == busId) return static_cast<int>(i);
  }
  return -1;
}

int Topology::cpuOf(int node) const {
  while (node >= 0 && nodes[static_cast<size_t>(node)].kind != NodeKind::kCpu)
    node = nodes[static_cast<size_t>(node)].parent;
  return node;
}

int Topology::findNic(const std::string& portName) const {
  for (size_t i = 0; i < nodes.size(); ++i) {
    for (const NicPort& p : nodes[i].ports) {
      if (p.name == portName) return static_cast<int>(i);
    }
  }
  return -1;
}

int Topology::findGpu(int gpuIndex) const {
  for (int i : indicesOf(NodeKind::kGpu)) {
    if (nodes[i].gpuIndex == gpuIndex) return i;
  }
  return -1;
}

const Link* Topology::nvlinkBetween(int a, int b) const {
  for (const Link& l : links) {
    if (l.kind == LinkKind::kNvlink && ((l.a == a && l.b == b) || (l.a == b && l.b == a))) return &l;
  }
  return nullptr;
}

bool Topology::nvlinkConnected(int gpuA, int gpuB) const {
  if (nvlinkBetween(gpuA, gpuB)) return true;
  for (int s : indicesOf(NodeKind::kNvSwitch)) {
    if (nvlinkBetween(gpuA, s) && nvlinkBetween(gpuB, s)) return true;
  }
  return false;
}

namespace {

int depthOf(const Topology& topo, int i) {
  int depth = 0;
  for (int p = topo.nodes[i].parent; p >= 0; p = topo.nodes[p].parent) ++depth;
  return depth;
}

void printNode(std::ostream& os, const Node& n) {
  os << nodeKindName(n.kind);
  if (!n.busId.empty()) os << " " << n.busId;
  if (n.numa >= 0) os << " numa=" << n.numa;
  if (n.package >= 0) os << " package=" << n.package;
  if (n.pciClass) os << " class=0x" << std::hex << n.pciClass << std::dec;
  if (n.vendor || n.device) os << " id=" << std::hex << n.vendor << ":" << n.device << std::dec;
  if (n.subsystemVendor || n.subsystemDevice)
    os << " subsystem=" << std::hex << n.subsystemVendor << ":" << n.subsystemDevice << std::dec;
  if (!n.affinity.empty()) os << " affinity=" << n.affinity;
  if (!n.cpuVendor.empty()) os << " vendor=" << n.cpuVendor;
  if (!n.arch.empty()) os << " arch=" << n.arch;
  if (n.gpuIndex >= 0) os << " dev=" << n.gpuIndex;
  if (n.sm) os << " sm=" << n.sm;
  for (const NicPort& p : n.ports) os << " port=" << p.name << "/" << p.port << "@" << p.speedMbps << "Mbps";
}

}  // namespace

std::string toString(const Topology& topo) {
  std::ostringstream os;
  for (size_t i = 0; i < topo.nodes.size(); ++i) {
    os << "#" << i << " " << std::string(2 * depthOf(topo, static_cast<int>(i)), ' ');
    printNode(os, topo.nodes[i]);
    os << "\n";
  }
  for (const Link& l : topo.links) {
    os << linkKindName(l.kind) << " #" << l.a << " - #" << l.b;
    if (l.kind == LinkKind::kPcie) os << " gen" << l.pcieGen << " x" << l.pcieWidth;
    if (l.kind == LinkKind::kNvlink) os << " x" << l.count;
    os << " " << l.gbps << " GB/s\n";
  }
  return os.str();
}

std::ostream& operator<<(std::ostream& os, const Topology& topo) {
  return os << toString(topo);
}

void addCpuInterconnect(Topology& topo) {
  std::vector<int> cpus = topo.indicesOf(NodeKind::kCpu);
  for (size_t i = 0; i < cpus.size(); ++i) {
    for (size_t j = i + 1; j < cpus.size(); ++j) {
      Link l;
      l.kind = LinkKind::kCpuInterconnect;
      l.a = cpus[i];
      l.b = cpus[j];
      l.gbps = cpuInterconnectGbps(topo.nodes[cpus[i]].cpuVendor);
      topo.links.push_back(l);
    }
  }
}

}  // namespace myriad
