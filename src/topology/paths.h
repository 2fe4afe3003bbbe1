// Paths between devices of one Topology in `nvidia-smi topo -m` vocabulary, with the bottleneck bandwidth,
// and the NIC ("rail") each GPU and each host-memory rank should use. Pure functions of the Topology:
// nothing here invents a link the Topology does not have.
#pragma once

#include <string>
#include <vector>

#include "topology/topology.h"

namespace myriad {

// Closest first: the order in which a nearer path is preferred.
enum class PathType {
  kSelf,  // X: the device itself
  kNvl,   // NV#: NVLink, directly or through NVSwitches
  kPix,   // at most one PCIe switch between the two
  kPxb,   // several PCIe switches, not through the host bridge
  kPhb,   // through a PCIe host bridge (the CPU)
  kNode,  // through the interconnect between host bridges of one NUMA node
  kSys,   // through the interconnect between NUMA nodes (UPI, Infinity Fabric, X-Bus)
};

struct Path {
  PathType type = PathType::kSys;
  int nvlinks = 0;  // kNvl: the number of links (estimated from bandwidth where the file gives only that)
  double gbps = 0;  // bottleneck bandwidth per direction, GB/s; 0: unknown
  bool operator==(const Path&) const = default;
};

// "X", "NV12", "PIX", "PXB", "PHB", "NODE", "SYS".
std::string pathName(const Path& p);

// The path between two node indices (GPU-GPU over NVLink where it exists, else over the PCI tree).
Path pathBetween(const Topology& topo, int a, int b);

// A NIC's display name: its first port's name, else "NIC<k>" with k its position in orderedNics.
std::string nicName(const Topology& topo, int nic);
// GPU nodes ordered by CUDA index, those without one last in bus id order (as CUDA and NVML count).
std::vector<int> orderedGpus(const Topology& topo);
// NIC nodes in bus id order, those without a bus id last.
std::vector<int> orderedNics(const Topology& topo);

// For every GPU of orderedGpus(topo), the node index of its preferred NIC (-1 when there is no NIC):
// the closest by path type, then the highest path bandwidth, then one in the GPU's CPU package, then the
// NIC chosen by the fewest GPUs so far (so that equally close NICs are shared evenly), then bus id.
// GPUs whose nearest NIC is closest choose first.
std::vector<int> preferredNics(const Topology& topo);

// The NICs a host-memory rank on NUMA node `numa` should use, best first: those on that NUMA node, then
// those in the same package, then the rest; within each group by PCIe bandwidth, then bus id.
std::vector<int> nicsForNuma(const Topology& topo, int numa);
// The NIC for local rank `localIndex` bound to `numa`: ranks on one NUMA node spread round-robin over the
// NICs of the nearest group; -1 when there is no NIC.
int nicForHostRank(const Topology& topo, int numa, int localIndex);

}  // namespace myriad
