// The parts of detection (detect.h), each filling one Detection from one source. Internal to detect*.cc.
#pragma once

#include <string>

#include "topology/detect.h"

namespace myriad::detail {

// A file's first line without its newline; "" when unreadable.
std::string readLine(const std::string& path);
// "0-3,8-11" -> "00000f0f" (32-bit hex words, most significant first, comma-separated: NCCL's affinity).
std::string maskFromCpuList(const std::string& list);
int countCpus(const std::string& list);

// hwloc: NUMA nodes, packages, the PCI tree and OS devices, through hwloc's XML export and our reader.
// NotSupported when built without hwloc or without pugixml.
Result<Topology> hwlocTopology();
// sysfs: NUMA nodes with CPU masks and packages.
Status sysfsNumaNodes(Topology& topo);
// The node of a PCI function, adding it and the bridges above it (from its sysfs path) when missing.
int ensurePciNode(Topology& topo, const std::string& busId);
// Interfaces (getifaddrs) and their sysfs PCI device, speed; NIC ports added to the Topology.
void sysfsNetworks(Detection& d);
// RDMA devices, ports, rates and GID tables.
void sysfsRdma(Detection& d);
// GPUs, bus ids, compute capability and NVLinks through NVML (dlopen); a note when there is none.
void nvmlGpus(Detection& d);

}  // namespace myriad::detail
