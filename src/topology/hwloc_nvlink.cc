// NVLinkBandwidth matrices of hwloc 2.x XML: nbobjs indexes ("OSDev:802" or a bare gp_index) and nbobjs^2
// values, row-major, possibly split over several <indexes>/<u64values> elements. The diagonal (a GPU to
// itself) and CPU-to-CPU entries are not links.
#include "topology/hwloc_nvlink.h"

#include <charconv>
#include <sstream>
#include <vector>

namespace myriad {
namespace {

std::vector<std::string> tokens(pugi::xml_node parent, const char* element) {
  std::vector<std::string> out;
  for (pugi::xml_node e : parent.children(element)) {
    std::istringstream in(e.child_value());
    for (std::string t; in >> t;) out.push_back(t);
  }
  return out;
}

bool parseU64(std::string_view s, uint64_t& out) {
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), out);
  return ec == std::errc() && end == s.data() + s.size() && !s.empty();
}

Status readMatrix(const XmlDoc& doc, pugi::xml_node m, const std::map<uint64_t, int>& byGpIndex, Topology& topo) {
  MYR_ASSIGN_OR_RETURN(int n, doc.intAttr(m, "nbobjs", -1));
  std::vector<std::string> idx = tokens(m, "indexes");
  std::vector<std::string> vals = tokens(m, "u64values");
  if (n < 0 || n > 4096 || idx.size() != static_cast<size_t>(n) || vals.size() != static_cast<size_t>(n) * n) {
    return doc.error(m, "NVLinkBandwidth: expected nbobjs indexes and nbobjs^2 values, got " +
                            std::to_string(idx.size()) + " and " + std::to_string(vals.size()));
  }
  std::vector<int> node(n, -1);
  for (int i = 0; i < n; ++i) {
    std::string_view t = idx[i];
    if (size_t colon = t.rfind(':'); colon != std::string_view::npos) t.remove_prefix(colon + 1);
    uint64_t gp = 0;
    if (!parseU64(t, gp)) return doc.error(m, "NVLinkBandwidth index \"" + idx[i] + "\": expected Type:gp_index");
    auto it = byGpIndex.find(gp);
    if (it != byGpIndex.end()) node[i] = it->second;
  }
  auto value = [&](int i, int j, uint64_t& out) { return parseU64(vals[static_cast<size_t>(i) * n + j], out); };
  for (int i = 0; i < n; ++i) {
    for (int j = i + 1; j < n; ++j) {
      uint64_t ij = 0, ji = 0;
      if (!value(i, j, ij) || !value(j, i, ji)) return doc.error(m, "NVLinkBandwidth: expected unsigned values");
      uint64_t mbps = ij ? ij : ji;
      int a = node[i], b = node[j];
      if (!mbps || a < 0 || b < 0 || a == b) continue;
      if (topo.nodes[a].kind == NodeKind::kCpu && topo.nodes[b].kind == NodeKind::kCpu) continue;
      if (topo.nodes[a].kind == NodeKind::kCpu) std::swap(a, b);  // the GPU end first, as in NCCL XML
      if (topo.nvlinkBetween(a, b)) continue;  // two indexes of one object: one link, as the NCCL reader keeps
      Link l;
      l.kind = LinkKind::kNvlink;
      l.a = a;
      l.b = b;
      l.gbps = static_cast<double>(mbps) / 1000.0;
      topo.links.push_back(l);
    }
  }
  return Status::ok();
}

}  // namespace

Status readHwlocNvlinks(const XmlDoc& doc, const std::map<uint64_t, int>& byGpIndex, Topology& topo) {
  for (pugi::xml_node m : doc.root().children()) {
    std::string_view name = m.name();
    if ((name == "distances2hetero" || name == "distances2") &&
        std::string_view(m.attribute("name").value()) == "NVLinkBandwidth") {
      MYR_TRY(readMatrix(doc, m, byGpIndex, topo));
    }
  }
  return Status::ok();
}

}  // namespace myriad
