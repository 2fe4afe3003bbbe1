// Path classification over the Topology's PCI tree and NVLinks, and NIC choice. A PCI path is climbed to the
// lowest common ancestor: a switch there gives PIX (one switch on the path, switches counted as NCCL counts
// them) or PXB (several); the CPU gives PHB (both ends below one host bridge: the same root bus) or NODE;
// different NUMA nodes give SYS.
#include "topology/paths.h"

#include <algorithm>
#include <cmath>
#include <set>
#include <tuple>

#include "topology/link_speed.h"
#include "topology/pci.h"
#include "topology/pci_switch.h"

namespace myriad {
namespace {

// The PCIe link from a node's parent to the node, or nullptr.
const Link* upLink(const Topology& topo, int node) {
  for (const Link& l : topo.links) {
    if (l.kind == LinkKind::kPcie && l.b == node) return &l;
  }
  return nullptr;
}

std::vector<int> chainToRoot(const Topology& topo, int node) {
  std::vector<int> out;
  for (int n = node; n >= 0; n = topo.nodes[n].parent) out.push_back(n);
  return out;
}

// Lowers `gbps` to the bandwidth of each known PCIe link from `from` up to (not including) `until`.
void capByUplinks(const Topology& topo, int from, int until, double& gbps) {
  for (int n = from; n >= 0 && n != until; n = topo.nodes[n].parent) {
    const Link* l = upLink(topo, n);
    if (l && l->gbps > 0) gbps = gbps > 0 ? std::min(gbps, l->gbps) : l->gbps;
  }
}

// "dddd:bb" of a bus id: devices below one host bridge share the root bus.
std::string rootBus(const std::string& busId) {
  size_t colon = busId.rfind(':');
  return colon == std::string::npos ? "" : busId.substr(0, colon);
}

// Per-link bandwidth for estimating a link count from hwloc's bandwidth-only matrices.
double perLinkGuess(const Node& gpu) {
  if (gpu.sm > 0) return nvlinkGbpsPerLink(gpu.sm);
  if (gpu.vendor == kNvidiaVendor && gpu.device >= 0x15f0 && gpu.device <= 0x15ff) return 20.0;  // P100
  return 25.0;
}

// NVLink between two GPUs: direct links plus, per NVSwitch both reach, the lesser of their two links.
Path nvlinkPath(const Topology& topo, int a, int b) {
  Path p;
  p.type = PathType::kNvl;
  if (const Link* d = topo.nvlinkBetween(a, b)) {
    p.nvlinks += d->count;
    p.gbps += d->gbps;
  }
  for (int s : topo.indicesOf(NodeKind::kNvSwitch)) {
    const Link* la = topo.nvlinkBetween(a, s);
    const Link* lb = topo.nvlinkBetween(b, s);
    if (!la || !lb) continue;
    p.nvlinks += std::min(la->count, lb->count);
    p.gbps += std::min(la->gbps, lb->gbps);
  }
  if (p.nvlinks == 0 && p.gbps > 0) {
    p.nvlinks = std::max(1, static_cast<int>(std::lround(p.gbps / perLinkGuess(topo.nodes[a]))));
  }
  return p;
}

int cpuRoot(const std::vector<int>& chain, const Topology& topo) {
  int root = chain.back();
  return topo.nodes[root].kind == NodeKind::kCpu ? root : -1;
}

Path pciPath(const Topology& topo, int a, int b) {
  std::vector<int> ca = chainToRoot(topo, a);
  std::vector<int> cb = chainToRoot(topo, b);
  int lca = -1;
  size_t ia = 0, ib = 0;
  for (size_t i = 0; i < ca.size() && lca < 0; ++i) {
    auto it = std::find(cb.begin(), cb.end(), ca[i]);
    if (it != cb.end()) {
      lca = ca[i];
      ia = i;
      ib = static_cast<size_t>(it - cb.begin());
    }
  }
  Path p;
  capByUplinks(topo, a, lca, p.gbps);
  capByUplinks(topo, b, lca, p.gbps);
  if (lca < 0) {
    // Different roots: two NUMA nodes (or a root that is no CPU, which is as far as it gets).
    int ra = cpuRoot(ca, topo), rb = cpuRoot(cb, topo);
    bool sameNuma = ra >= 0 && rb >= 0 && topo.nodes[ra].numa >= 0 && topo.nodes[ra].numa == topo.nodes[rb].numa;
    p.type = sameNuma ? PathType::kNode : PathType::kSys;
    for (const Link& l : topo.links) {
      bool joins = (l.a == ra && l.b == rb) || (l.a == rb && l.b == ra);
      if (l.kind == LinkKind::kCpuInterconnect && joins && l.gbps > 0)
        p.gbps = p.gbps > 0 ? std::min(p.gbps, l.gbps) : l.gbps;
    }
    return p;
  }
  if (topo.nodes[lca].kind == NodeKind::kCpu) {
    // The children of the CPU on each side: below one host bridge when they share a root bus.
    const Node& ta = topo.nodes[ca[ia == 0 ? 0 : ia - 1]];
    const Node& tb = topo.nodes[cb[ib == 0 ? 0 : ib - 1]];
    bool oneBridge =
        ia == 0 || ib == 0 || ta.busId.empty() || tb.busId.empty() || rootBus(ta.busId) == rootBus(tb.busId);
    p.type = oneBridge ? PathType::kPhb : PathType::kNode;
    return p;
  }
  // NCCL: a path that crosses from one switch to another is PXB, so PIX means one switch (after its
  // Broadcom flattening, pci_switch.h) between the two ends.
  std::vector<int> level = switchLevels(topo);
  std::set<int> switches;
  for (size_t i = 1; i <= ia; ++i) {
    if (topo.nodes[ca[i]].kind == NodeKind::kPciSwitch) switches.insert(level[ca[i]]);
  }
  for (size_t i = 1; i < ib; ++i) {
    if (topo.nodes[cb[i]].kind == NodeKind::kPciSwitch) switches.insert(level[cb[i]]);
  }
  p.type = switches.size() <= 1 ? PathType::kPix : PathType::kPxb;
  return p;
}

int packageOfNuma(const Topology& topo, int numa) {
  for (int c : topo.indicesOf(NodeKind::kCpu)) {
    if (topo.nodes[c].numa == numa) return topo.nodes[c].package;
  }
  return -1;
}

bool isNvlinked(const Topology& topo, int a, int b) {
  return topo.nodes[a].kind == NodeKind::kGpu && topo.nodes[b].kind == NodeKind::kGpu && topo.nvlinkConnected(a, b);
}

}  // namespace

std::string pathName(const Path& p) {
  switch (p.type) {
    case PathType::kSelf: return "X";
    case PathType::kNvl: return "NV" + std::to_string(p.nvlinks);
    case PathType::kPix: return "PIX";
    case PathType::kPxb: return "PXB";
    case PathType::kPhb: return "PHB";
    case PathType::kNode: return "NODE";
    case PathType::kSys: return "SYS";
  }
  return "?";
}

Path pathBetween(const Topology& topo, int a, int b) {
  if (a == b) return Path{PathType::kSelf, 0, 0};
  if (isNvlinked(topo, a, b)) return nvlinkPath(topo, a, b);
  return pciPath(topo, a, b);
}

std::string nicName(const Topology& topo, int nic) {
  if (!topo.nodes[nic].ports.empty()) return topo.nodes[nic].ports.front().name;
  std::vector<int> nics = orderedNics(topo);
  auto it = std::find(nics.begin(), nics.end(), nic);
  return "NIC" + std::to_string(it - nics.begin());
}

std::vector<int> orderedNics(const Topology& topo) {
  std::vector<int> nics = topo.indicesOf(NodeKind::kNic);
  std::stable_sort(nics.begin(), nics.end(), [&](int x, int y) {
    const std::string &bx = topo.nodes[x].busId, &by = topo.nodes[y].busId;
    return bx.empty() != by.empty() ? by.empty() : bx < by;  // those without a bus id last
  });
  return nics;
}

std::vector<int> orderedGpus(const Topology& topo) {
  std::vector<int> gpus = topo.indicesOf(NodeKind::kGpu);
  std::stable_sort(gpus.begin(), gpus.end(), [&](int x, int y) {
    // -1 becomes the largest unsigned value: unknown indices last, then in PCI order as CUDA counts them
    unsigned ix = static_cast<unsigned>(topo.nodes[x].gpuIndex), iy = static_cast<unsigned>(topo.nodes[y].gpuIndex);
    return ix != iy ? ix < iy : topo.nodes[x].busId < topo.nodes[y].busId;
  });
  return gpus;
}

std::vector<int> preferredNics(const Topology& topo) {
  std::vector<int> gpus = orderedGpus(topo);
  std::vector<int> nics = orderedNics(topo);
  std::vector<int> out(gpus.size(), -1);
  if (nics.empty()) return out;
  std::vector<std::vector<Path>> paths(gpus.size());
  std::vector<size_t> order(gpus.size());
  for (size_t g = 0; g < gpus.size(); ++g) {
    for (int n : nics) paths[g].push_back(pathBetween(topo, gpus[g], n));
    order[g] = g;
  }
  // GPUs with a near NIC choose first, so that far ones spread over what is left.
  auto bestType = [&](size_t g) {
    return std::min_element(paths[g].begin(), paths[g].end(), [](auto& x, auto& y) { return x.type < y.type; })->type;
  };
  std::stable_sort(order.begin(), order.end(), [&](size_t x, size_t y) { return bestType(x) < bestType(y); });
  std::vector<int> load(nics.size(), 0);
  for (size_t g : order) {
    int gpuPackage = packageOfNuma(topo, topo.nodes[gpus[g]].numa);
    auto key = [&](size_t k) {
      const Path& p = paths[g][k];
      bool samePackage = gpuPackage >= 0 && packageOfNuma(topo, topo.nodes[nics[k]].numa) == gpuPackage;
      return std::make_tuple(static_cast<int>(p.type), -p.gbps, samePackage ? 0 : 1, load[k], k);
    };
    size_t best = 0;
    for (size_t k = 1; k < nics.size(); ++k) {
      if (key(k) < key(best)) best = k;
    }
    ++load[best];
    out[g] = nics[best];
  }
  return out;
}

namespace {

// 0: the NIC is on NUMA node `numa`; 1: in the same package; 2: elsewhere or unknown.
int numaGroup(const Topology& topo, int numa, int nic) {
  int n = topo.nodes[nic].numa;
  if (n >= 0 && n == numa) return 0;
  int package = packageOfNuma(topo, numa);
  if (n >= 0 && package >= 0 && packageOfNuma(topo, n) == package) return 1;
  return 2;
}

double hostBandwidth(const Topology& topo, int nic) {
  double gbps = 0;
  capByUplinks(topo, nic, -1, gbps);
  return gbps;
}

}  // namespace

std::vector<int> nicsForNuma(const Topology& topo, int numa) {
  std::vector<int> nics = orderedNics(topo);
  std::stable_sort(nics.begin(), nics.end(), [&](int x, int y) {
    int gx = numaGroup(topo, numa, x), gy = numaGroup(topo, numa, y);
    if (gx != gy) return gx < gy;
    return hostBandwidth(topo, x) > hostBandwidth(topo, y);
  });
  return nics;
}

int nicForHostRank(const Topology& topo, int numa, int localIndex) {
  std::vector<int> nics = nicsForNuma(topo, numa);
  if (nics.empty()) return -1;
  std::vector<int> nearest;
  for (int n : nics) {
    if (numaGroup(topo, numa, n) == numaGroup(topo, numa, nics.front()) &&
        hostBandwidth(topo, n) == hostBandwidth(topo, nics.front()))
      nearest.push_back(n);
  }
  return nearest[static_cast<size_t>(std::max(localIndex, 0)) % nearest.size()];
}

}  // namespace myriad
