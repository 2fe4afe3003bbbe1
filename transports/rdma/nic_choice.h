// Which RDMA device a rank should use, as the topology sees it: the NIC that src/topology/paths.cc assigns
// to the rank's GPU, or (a host-memory rank) to the NUMA node its CPU affinity lies on, matched by name
// against the verbs ports that MYRIAD_IB_HCA lets through. Pure functions of their inputs (no verbs, no
// sysfs), so the unit tests drive them with recorded topologies. Invariant: a choice that cannot be used
// says why, and the caller falls back to the (rank mod n)-th port.
#pragma once

#include <string>
#include <vector>

#include "topology/topology.h"

namespace myriad {

struct NicWish {
  int gpu = -1;           // the rank's CUDA device index; -1: a host-memory rank
  std::vector<int> cpus;  // the CPUs the rank may run on (sched_getaffinity)
  int spread = 0;         // spreads host ranks of one NUMA node over its equally near NICs (the rank)
};

struct NicChoice {
  int nic = -1;                // node index in the topology; -1: none (see why)
  std::vector<NicPort> ports;  // its ports as the topology names them (mlx5_0 port 1, ib0, ...)
  std::string via;             // "GPU 3" or "NUMA node 1", for the log
  std::string why;             // nic < 0: the reason
};

// The NUMA node that holds every CPU of `cpus` (by the affinity masks of the topology's CPU nodes); -1
// with the reason when they span several nodes, or the topology gives no masks that cover them.
int numaOfCpus(const Topology& topo, const std::vector<int>& cpus, std::string* why);

NicChoice topologyNic(const Topology& topo, const NicWish& wish);

// A verbs port that passed MYRIAD_IB_HCA.
struct IbPortName {
  std::string device;
  int port = 0;
};
// The index into `candidates` of the chosen NIC's port: a port of the same device name, of the same port
// number if there is one; -1 with the reason when no device name matches.
int matchNic(const std::vector<IbPortName>& candidates, const NicChoice& choice, std::string* why);

// The CPU list of an affinity mask as the topology spells it: 32-bit hex words, most significant first,
// separated by commas, each with an optional 0x, an empty word meaning 0 ("000000ff,ffff0000",
// "0x000000ff,,0x000000ff"); empty for a malformed mask.
std::vector<int> cpusOfMask(const std::string& mask);

}  // namespace myriad
