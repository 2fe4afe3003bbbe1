// Topology: one machine's wiring as a plain value (nodes in a tree plus links), the same whether it came from
// detection, NCCL topology XML or hwloc XML. Invariant: nodes refer to each other only by index into
// `nodes`, parents come before their children, and every link joins two valid indices.
#pragma once

#include <cstdint>
#include <ostream>
#include <string>
#include <vector>

namespace myriad {

enum class NodeKind {
  kCpu,        // a NUMA node (with its CPU package); the roots of the PCI trees
  kPciSwitch,  // a PCI bridge or switch (class 0x0604, or any PCI node that has PCI children)
  kGpu,        // an NVIDIA GPU (class 0x03xx)
  kNic,        // a network device (class 0x02xx, or a NIC the file names without a PCI parent)
  kNvSwitch,   // an NVSwitch (class 0x0680), on the PCI tree or only as an NVLink end
  kPciDevice,  // any other PCI function, including ones whose class the file does not give
};

const char* nodeKindName(NodeKind kind);

// One port of a NIC as the network stack names it (mlx5_0 port 1, eth0).
struct NicPort {
  std::string name;
  int port = 0;
  int speedMbps = 0;  // 0: unknown
  bool operator==(const NicPort&) const = default;
};

struct Node {
  NodeKind kind = NodeKind::kPciDevice;
  int parent = -1;               // index into Topology::nodes; -1 for roots
  int numa = -1;                 // NUMA node this node is attached to (its own id for kCpu); -1: unknown
  int package = -1;              // kCpu: the CPU package (socket) of the NUMA node; -1: unknown
  std::string busId;             // PCI bus id, lower case "dddd:bb:dd.f"; empty when not on PCI
  uint32_t pciClass = 0;         // 24-bit class code (0x030200); 0: unknown
  uint16_t vendor = 0;           // PCI vendor id; 0: unknown
  uint16_t device = 0;           // PCI device id; 0: unknown
  uint16_t subsystemVendor = 0;  // PCI subsystem vendor id (who built the board); 0: unknown
  uint16_t subsystemDevice = 0;  // PCI subsystem device id; 0: unknown
  // kCpu
  std::string affinity;  // CPU set as the file spells it (hex words)
  std::string cpuVendor;
  std::string arch;
  // kGpu
  int gpuIndex = -1;  // CUDA device index ("dev"); -1: unknown
  int sm = 0;         // compute capability x10 (90 = Hopper); 0: unknown
  // kNic
  std::vector<NicPort> ports;

  bool operator==(const Node&) const = default;
};

enum class LinkKind { kPcie, kNvlink, kCpuInterconnect };

const char* linkKindName(LinkKind kind);

// An undirected link. PCIe: a = upstream (parent), b = downstream. Bandwidth is per direction in GB/s.
struct Link {
  LinkKind kind = LinkKind::kPcie;
  int a = -1;
  int b = -1;
  int pcieGen = 0;    // kPcie: 1..6; 0: unknown
  int pcieWidth = 0;  // kPcie: lanes; 0: unknown
  int count = 0;      // kNvlink: number of links
  double gbps = 0;    // total bandwidth of the link; 0: unknown
  bool operator==(const Link&) const = default;
};

struct Topology {
  std::vector<Node> nodes;
  std::vector<Link> links;

  bool operator==(const Topology&) const = default;

  std::vector<int> indicesOf(NodeKind kind) const;
  int count(NodeKind kind) const { return static_cast<int>(indicesOf(kind).size()); }
  int findBusId(const std::string& busId) const;   // -1 if absent
  int findNic(const std::string& portName) const;  // by any port name; -1 if absent
  int findGpu(int gpuIndex) const;                 // by CUDA index; -1 if absent
  int cpuOf(int node) const;                       // the kCpu node above `node` (or itself); -1 if none
  // The NVLink joining two nodes directly, or nullptr.
  const Link* nvlinkBetween(int a, int b) const;
  // Whether two GPUs share NVLink, directly or through one NVSwitch.
  bool nvlinkConnected(int gpuA, int gpuB) const;

  // Appends a node and returns its index.
  int add(Node node);
};

// A multi-line description: one line per node, indented by depth, then one line per link.
std::string toString(const Topology& topo);
std::ostream& operator<<(std::ostream& os, const Topology& topo);
// Links every pair of kCpu nodes with a kCpuInterconnect link (loaders call it once, at the end).
void addCpuInterconnect(Topology& topo);

}  // namespace myriad
