// Detection of the running machine's Topology: hwloc (packages, NUMA nodes, the PCI tree, OS devices)
// when built with it, else sysfs alone (NUMA nodes and PCI NICs); then sysfs for NIC speeds, RDMA devices
// and PCI NUMA nodes, getifaddrs() for interfaces, NVML by dlopen for GPUs and their NVLinks. Nothing is
// invented: a machine without a GPU (or without NVML) has no GPU in its Topology, and notes says why.
#pragma once

#include <string>
#include <vector>

#include "base/status.h"
#include "topology/topology.h"

namespace myriad {

struct Detection {
  Topology topo;
  std::vector<std::string> notes;  // what each source found or why it found nothing ("NVML: ... not found")
  // RDMA devices from /sys/class/infiniband, with the GIDs of each port (RoCE v1/v2, IPv4-mapped or not).
  struct Gid {
    int port = 0;
    int index = 0;
    std::string gid;   // "fe80:0000:...", as sysfs spells it
    std::string type;  // "IB/RoCE v1", "RoCE v2", "" when the kernel does not say
    std::string netdev;
    bool ipv4Mapped = false;  // ::ffff:a.b.c.d, the GID of an IPv4 address (RoCE)
  };
  struct RdmaDevice {
    std::string name;
    std::string busId;  // "" when not on PCI (rxe, siw)
    std::vector<Gid> gids;
  };
  std::vector<RdmaDevice> rdma;
  // Every interface getifaddrs() lists, with the PCI device sysfs attaches it to ("" for loopback, veth, ...).
  struct Interface {
    std::string name;
    std::string busId;
    std::vector<std::string> addresses;
  };
  std::vector<Interface> interfaces;
  int cpus = 0;  // online CPUs
};

// hwloc when available, else sysfs; sysfs, getifaddrs and NVML complete it. Only machine-level failures
// (no /sys at all) are errors.
Result<Detection> detectMachine();
// sysfs alone (no hwloc): NUMA nodes with their CPUs, NICs with the PCI bridges above them.
Result<Detection> detectMachineSysfs();

// The Topology of this process's machine: MYRIAD_TOPO_FILE (`topoFile`) when set, with what the file
// leaves out filled from detection, else detection; computed once per process and shared.
Result<Topology> localTopology(const std::string& topoFile);
// Adds to `file` what it lacks and `detected` has: ports, speeds, CUDA indices and compute capability of
// nodes with the same bus id, and detected GPUs and NICs whose bus ids the file does not name (under the
// CPU of their NUMA node). NVLinks of detected GPUs come along when both ends are present.
Topology mergeDetected(Topology file, const Topology& detected);

}  // namespace myriad
