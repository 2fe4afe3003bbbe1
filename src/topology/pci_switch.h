// Which PCI bridges count as one switch when paths are classified, by NCCL's rule (its Broadcom flattening),
// so that PIX and PXB come out as NCCL computes them from the same file. Invariant: only a Broadcom PEX
// Gen4/Gen5 bridge in base mode (all four PCI ids known and matching) absorbs its direct child bridges;
// every other bridge, including one whose ids are unknown, is a switch level of its own.
#pragma once

#include <cstdint>
#include <vector>

#include "topology/topology.h"

namespace myriad {

constexpr uint16_t kBroadcomVendor = 0x1000;
constexpr uint16_t kPex88000 = 0xc010;  // PEX88000, PCIe Gen4
constexpr uint16_t kPex89000 = 0xc030;  // PEX89000, PCIe Gen5

// The PCIe generation (4 or 5) of a Broadcom PEX bridge in base mode, as the upstream port of the switch
// (subSwitch false) or as a port below it (subSwitch true); 0 for any other node. Gen4: subsystem device
// 0xaXXX at both levels; Gen5: 0x0XXX above, 0x1XXX below; the subsystem vendor is Broadcom in both.
int broadcomPexGeneration(const Node& n, bool subSwitch);

// For every node, the node it counts as on a PCI path: the Broadcom switch above it when it is a bridge
// that switch absorbs, else itself. Only direct children are absorbed, and an absorbed bridge absorbs
// nothing; a bridge with another subsystem id (one the GPU baseboard owns) stays a level of its own.
std::vector<int> switchLevels(const Topology& topo);

}  // namespace myriad
