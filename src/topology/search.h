// Intra-node ring and chain (tree) orders over a Topology's GPUs that maximise the bottleneck: the worst
// hop's path type first (NVLink, then one PCIe switch, ..., SYS last), then its bandwidth, then the fewest
// SYS crossings. Orders are positions in orderedGpus(topo), i.e. GPU<k> of the matrix.
#pragma once

#include <vector>

#include "topology/paths.h"
#include "topology/topology.h"

namespace myriad {

struct RingOrder {
  std::vector<int> gpus;             // positions in orderedGpus(topo); the ring closes from back() to front()
  PathType worst = PathType::kSelf;  // the worst hop's path type
  double bottleneckGbps = 0;         // the worst hop's bandwidth (0: unknown)
  int sysCrossings = 0;              // hops of type SYS
};

// The best ring over all GPUs: exhaustive up to 9 GPUs, nearest-neighbour starts improved by 2-opt above.
// Empty when the topology has no GPU.
RingOrder searchRing(const Topology& topo);
// A chain for intra-node trees: the ring opened at its weakest hop (NCCL builds intra-node trees as
// chains too); the first GPU is the chain's root.
std::vector<int> searchChain(const Topology& topo);

}  // namespace myriad
