// NCCL's flattening of Broadcom PEX switches, as a map from each node to the switch it counts as. NCCL
// flattens in the order it created the nodes (parents first) and marks a flattened switch so that it
// never matches again; walking the nodes in index order (parents come before children) gives the same.
#include "topology/pci_switch.h"

namespace myriad {

int broadcomPexGeneration(const Node& n, bool subSwitch) {
  if (n.vendor != kBroadcomVendor || n.subsystemVendor != kBroadcomVendor) return 0;
  int mode = n.subsystemDevice >> 12;
  if (n.device == kPex88000 && mode == 0xa) return 4;
  if (n.device == kPex89000 && mode == (subSwitch ? 1 : 0)) return 5;
  return 0;
}

std::vector<int> switchLevels(const Topology& topo) {
  size_t count = topo.nodes.size();
  std::vector<int> level(count);
  std::vector<int> absorbs(count, 0);  // the generation a switch flattens its children by; 0: none
  for (size_t i = 0; i < count; ++i) {
    const Node& n = topo.nodes[i];
    level[i] = static_cast<int>(i);
    if (n.kind != NodeKind::kPciSwitch) continue;
    int p = n.parent;
    if (p >= 0 && absorbs[p] != 0 && broadcomPexGeneration(n, true) == absorbs[p]) {
      level[i] = p;  // merged into its parent; a merged bridge absorbs nothing itself
      continue;
    }
    absorbs[i] = broadcomPexGeneration(n, false);
  }
  return level;
}

}  // namespace myriad
