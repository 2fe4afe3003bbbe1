// Matrix, JSON and DOT views of a Topology. GPUs are labelled GPU<k> by their position in orderedGpus
// (the CUDA index where the source gives one), NICs by nicName; the JSON uses the same labels as keys.
#include "tools/topo/topo_report.h"

#include <algorithm>
#include <cstdio>
#include <set>
#include <sstream>

#include "topology/paths.h"
#include "topology/pci.h"
#include "topology/search.h"

namespace myriad {
namespace {

struct Labelled {
  std::vector<int> nodes;  // GPUs (ordered) then NICs
  std::vector<std::string> labels;
  size_t gpus = 0;
};

Labelled devices(const Topology& topo) {
  Labelled d;
  for (int g : orderedGpus(topo)) {
    d.labels.push_back("GPU" + std::to_string(d.nodes.size()));
    d.nodes.push_back(g);
  }
  d.gpus = d.nodes.size();
  for (int n : orderedNics(topo)) {
    d.labels.push_back(nicName(topo, n));
    d.nodes.push_back(n);
  }
  return d;
}

std::string affinityOf(const Topology& topo, int node) {
  for (int c : topo.indicesOf(NodeKind::kCpu)) {
    if (topo.nodes[c].numa == topo.nodes[node].numa) return cpuListFromMask(topo.nodes[c].affinity);
  }
  return "";
}

int numaNodes(const Topology& topo) {
  std::set<int> ids;
  for (int c : topo.indicesOf(NodeKind::kCpu)) ids.insert(topo.nodes[c].numa);
  return static_cast<int>(ids.size());
}

double speedGbps(const Node& nic) {
  int mbps = 0;
  for (const NicPort& p : nic.ports) mbps = std::max(mbps, p.speedMbps);
  return mbps / 1000.0;
}

std::string orderText(const std::vector<int>& order) {
  std::string s;
  for (int g : order) s += (s.empty() ? "GPU" : " GPU") + std::to_string(g);
  return s;
}

std::string pad(const std::string& s, size_t w) {
  return s.size() >= w ? s + " " : s + std::string(w - s.size() + 1, ' ');
}

std::string gbpsText(double gbps) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%.1f", gbps);
  return buf;
}

std::string legend() {
  return "\nLegend: X self; NV# NVLinks (direct or through NVSwitch); PIX at most one PCIe switch; PXB several PCIe "
         "switches;\n        PHB a PCIe host bridge; NODE host bridges within a NUMA node; SYS between NUMA nodes\n";
}

}  // namespace

std::string cpuListFromMask(const std::string& mask) {
  std::vector<uint32_t> words;
  size_t pos = 0;
  while (pos <= mask.size() && !mask.empty()) {
    size_t comma = mask.find(',', pos);
    std::string w = mask.substr(pos, comma == std::string::npos ? std::string::npos : comma - pos);
    std::optional<uint32_t> v = w.empty() ? std::optional<uint32_t>(0) : parseHex(w, 0xffffffffu);
    if (!v) return "";
    words.push_back(*v);
    if (comma == std::string::npos) break;
    pos = comma + 1;
  }
  std::reverse(words.begin(), words.end());  // least significant word first
  std::string out;
  int start = -1;
  int total = static_cast<int>(words.size()) * 32;
  for (int bit = 0; bit <= total; ++bit) {
    bool set = bit < total && (words[static_cast<size_t>(bit / 32)] >> (bit % 32)) & 1u;
    if (set && start < 0) start = bit;
    if (!set && start >= 0) {
      out += (out.empty() ? "" : ",") + std::to_string(start);
      if (bit - 1 > start) out += "-" + std::to_string(bit - 1);
      start = -1;
    }
  }
  return out;
}

std::string topologyMatrix(const Topology& topo) {
  Labelled d = devices(topo);
  std::vector<int> nics = preferredNics(topo);
  std::ostringstream os;
  if (d.nodes.empty()) {
    os << "no GPUs and no NICs (" << numaNodes(topo) << " NUMA nodes, " << topo.nodes.size() << " nodes)\n";
    return os.str();
  }
  size_t w = 4;
  for (const std::string& l : d.labels) w = std::max(w, l.size());
  os << pad("", w);
  for (const std::string& l : d.labels) os << pad(l, w);
  os << "CPU Affinity    NUMA Affinity  NIC\n";
  for (size_t i = 0; i < d.nodes.size(); ++i) {
    os << pad(d.labels[i], w);
    for (size_t j = 0; j < d.nodes.size(); ++j) os << pad(pathName(pathBetween(topo, d.nodes[i], d.nodes[j])), w);
    int numa = topo.nodes[d.nodes[i]].numa;
    os << pad(affinityOf(topo, d.nodes[i]), 15) << pad(numa >= 0 ? std::to_string(numa) : "N/A", 14);
    if (i < d.gpus) os << (nics[i] >= 0 ? nicName(topo, nics[i]) : "none");
    os << "\n";
  }
  os << "\nNICs:\n";
  for (size_t i = d.gpus; i < d.nodes.size(); ++i) {
    const Node& n = topo.nodes[d.nodes[i]];
    os << "  " << pad(d.labels[i], w) << (n.busId.empty() ? "(no PCI address)" : n.busId);
    for (const NicPort& p : n.ports)
      os << " " << p.name << (p.speedMbps ? "@" + std::to_string(p.speedMbps / 1000) + "G" : "");
    os << "\n";
  }
  RingOrder ring = searchRing(topo);
  if (!ring.gpus.empty()) {
    std::string worst = ring.worst == PathType::kNvl ? "NVLink" : pathName(Path{ring.worst, 0, 0});
    os << "\nRing : " << orderText(ring.gpus) << "  (worst hop " << worst << ", bottleneck "
       << gbpsText(ring.bottleneckGbps) << " GB/s, " << ring.sysCrossings << " SYS crossings)\n";
    os << "Chain: " << orderText(searchChain(topo)) << "\n";
  }
  std::string text = os.str();
  // No trailing blanks (the NIC rows leave the last columns empty).
  std::string out;
  std::istringstream lines(text);
  for (std::string line; std::getline(lines, line);) {
    line.erase(line.find_last_not_of(' ') + 1);
    out += line + "\n";
  }
  return out + legend();
}

nlohmann::ordered_json topologyJson(const Topology& topo) {
  Labelled d = devices(topo);
  std::vector<int> nics = preferredNics(topo);
  nlohmann::ordered_json j;
  j["gpus"] = nlohmann::ordered_json::array();
  for (size_t i = 0; i < d.gpus; ++i) {
    const Node& g = topo.nodes[d.nodes[i]];
    j["gpus"].push_back(
        {{"index", static_cast<int>(i)},
         {"busId", g.busId},
         {"numa", g.numa},
         {"nic", nics[i] >= 0 ? nlohmann::ordered_json(nicName(topo, nics[i])) : nlohmann::ordered_json(nullptr)}});
  }
  j["nics"] = nlohmann::ordered_json::array();
  for (size_t i = d.gpus; i < d.nodes.size(); ++i) {
    const Node& n = topo.nodes[d.nodes[i]];
    j["nics"].push_back({{"name", d.labels[i]}, {"busId", n.busId}, {"numa", n.numa}, {"speedGbps", speedGbps(n)}});
  }
  j["numaNodes"] = numaNodes(topo);
  j["matrix"] = nlohmann::ordered_json::object();
  for (size_t a = 0; a < d.nodes.size(); ++a) {
    nlohmann::ordered_json row = nlohmann::ordered_json::object();
    for (size_t b = 0; b < d.nodes.size(); ++b) {
      if (a != b) row[d.labels[b]] = pathName(pathBetween(topo, d.nodes[a], d.nodes[b]));
    }
    j["matrix"][d.labels[a]] = row;
  }
  j["rings"] = nlohmann::ordered_json::array();
  RingOrder ring = searchRing(topo);
  if (!ring.gpus.empty()) j["rings"].push_back(ring.gpus);
  return j;
}

std::string topologyDot(const Topology& topo) {
  Labelled d = devices(topo);
  auto label = [&](int node) {
    auto it = std::find(d.nodes.begin(), d.nodes.end(), node);
    if (it != d.nodes.end()) return d.labels[static_cast<size_t>(it - d.nodes.begin())];
    const Node& n = topo.nodes[node];
    if (n.kind == NodeKind::kCpu) return "NUMA " + std::to_string(n.numa);
    if (n.kind == NodeKind::kNvSwitch) return std::string("NVSwitch");
    if (n.kind == NodeKind::kPciSwitch) return std::string("PCIe switch");
    return std::string("PCI");
  };
  std::ostringstream os;
  os << "graph topology {\n  graph [rankdir=TB, fontname=\"Helvetica\", nodesep=0.15, ranksep=0.5];\n"
     << "  node [shape=box, style=\"rounded,filled\", fontname=\"Helvetica\", fontsize=10];\n"
     << "  edge [fontname=\"Helvetica\", fontsize=8];\n";
  auto declare = [&](int i) {
    const Node& n = topo.nodes[i];
    std::string fill = "#eeeeee";
    if (n.kind == NodeKind::kGpu) fill = "#b7e1a1";
    if (n.kind == NodeKind::kNic) fill = "#a9c8f0";
    if (n.kind == NodeKind::kNvSwitch) fill = "#76b900";
    if (n.kind == NodeKind::kCpu) fill = "#f5d0a9";
    std::string text = label(i);
    if (!n.busId.empty()) text += "\\n" + n.busId;
    if (n.kind == NodeKind::kCpu) {
      std::string cpus = cpuListFromMask(n.affinity);
      if (!cpus.empty()) text += "\\nCPUs " + cpus;
    }
    os << "  n" << i << " [label=\"" << text << "\", fillcolor=\"" << fill << "\"];\n";
  };
  for (int c : topo.indicesOf(NodeKind::kCpu)) {
    os << " subgraph cluster_numa" << c << " {\n  label=\"NUMA " << topo.nodes[c].numa << "\"; style=dashed;\n";
    for (size_t i = 0; i < topo.nodes.size(); ++i) {
      int root = static_cast<int>(i);
      while (topo.nodes[root].parent >= 0) root = topo.nodes[root].parent;
      if (root == c) declare(static_cast<int>(i));
    }
    os << " }\n";
  }
  // NVSwitches (and anything else off the PCI trees) in one row below the GPUs.
  os << " subgraph cluster_fabric {\n  label=\"NVLink fabric\"; style=dashed; rank=same;\n";
  for (size_t i = 0; i < topo.nodes.size(); ++i) {
    int root = static_cast<int>(i);
    while (topo.nodes[root].parent >= 0) root = topo.nodes[root].parent;
    if (topo.nodes[root].kind != NodeKind::kCpu) declare(static_cast<int>(i));
  }
  os << " }\n";
  for (const Link& l : topo.links) {
    os << "  n" << l.a << " -- n" << l.b;
    if (l.kind == LinkKind::kPcie) {
      os << " [label=\"" << (l.pcieGen ? "gen" + std::to_string(l.pcieGen) + " x" + std::to_string(l.pcieWidth) : "")
         << "\"]";
    } else if (l.kind == LinkKind::kNvlink) {
      std::string count = l.count ? "NV" + std::to_string(l.count) : std::to_string(static_cast<int>(l.gbps)) + " GB/s";
      bool toSwitch = topo.nodes[l.b].kind == NodeKind::kNvSwitch || topo.nodes[l.a].kind == NodeKind::kNvSwitch;
      os << " [color=\"#4a9a00\", penwidth=1.5, fontcolor=\"#2f6400\", label=\"" << count << "\""
         << (toSwitch ? "" : ", constraint=false") << "]";
    } else {
      os << " [style=dashed, label=\"CPU link\", constraint=false]";
    }
    os << ";\n";
  }
  os << "}\n";
  return os.str();
}

}  // namespace myriad
