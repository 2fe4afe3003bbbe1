// What myriad-topo prints about a Topology: the `nvidia-smi topo -m`-style matrix over GPUs and NICs with
// CPU and NUMA affinity, each GPU's NIC and the ring/chain orders; the same as JSON; a Graphviz graph.
// Every view is computed from the Topology alone (paths.h, search.h), so a file and a live machine print alike.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "topology/topology.h"

namespace myriad {

// "00000000,000fffff" or "0x000000ff,0x0" (32-bit words, most significant first) -> "0-19"; "" if unknown.
std::string cpuListFromMask(const std::string& mask);
// The matrix, a legend of the NICs and the ring and chain orders.
std::string topologyMatrix(const Topology& topo);
// {"gpus": [{"index", "busId", "numa", "nic"}], "nics": [{"name", "busId", "numa", "speedGbps"}],
//  "numaNodes": N, "matrix": {"GPU0": {"GPU1": "NV18", "mlx5_0": "PXB", ...}, ...}, "rings": [[...]]}
nlohmann::ordered_json topologyJson(const Topology& topo);
// A Graphviz digraph: NUMA nodes as clusters, the PCI tree, NVLinks (green, labelled NV#).
std::string topologyDot(const Topology& topo);

}  // namespace myriad
