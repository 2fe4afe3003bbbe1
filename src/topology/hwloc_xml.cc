// Reads hwloc XML, v2 (<topology version="2.0">) and v1 (no version): NUMA nodes with their package, the
// PCI tree (host bridges are not nodes: their children hang off the NUMA node), class and ids from
// pci_type, link bandwidth from pci_link_speed, and OS devices: network and OpenFabrics ports on their NIC,
// cudaN/nvmlN naming the GPU index. v1 nests I/O under NUMANode, v2 beside it; the nodeset of the
// enclosing object decides the NUMA node in both.
#include <algorithm>
#include <charconv>
#include <map>
#include <optional>
#include <set>

#include "topology/hwloc_nvlink.h"
#include "topology/pci.h"
#include "topology/xml_doc.h"

namespace myriad {
namespace {

bool isType(pugi::xml_node o, std::string_view type) {
  return type == o.attribute("type").value();
}

// The lowest set bit of an hwloc bitmap "0x000000ff,,0x00000f00" (32-bit words, most significant first).
int lowestBit(std::string_view mask) {
  int word = 0;
  while (!mask.empty()) {
    size_t comma = mask.rfind(',');
    std::string_view w = comma == std::string_view::npos ? mask : mask.substr(comma + 1);
    std::optional<uint32_t> v = w.empty() ? std::optional<uint32_t>(0) : parseHex(w, 0xffffffffu);
    if (!v) return -1;
    for (int b = 0; b < 32; ++b) {
      if (*v & (1u << b)) return word * 32 + b;
    }
    if (comma == std::string_view::npos) break;
    mask = mask.substr(0, comma);
    ++word;
  }
  return -1;
}

class HwlocReader {
 public:
  explicit HwlocReader(const XmlDoc& doc) : doc_(doc) {}

  Result<Topology> read() {
    std::string_view version = doc_.root().attribute("version").value();
    if (!version.empty() && version.front() != '2' && version.front() != '3') {
      return doc_.error(doc_.root(), "hwloc XML version \"" + std::string(version) + "\": expected 2.x or none (v1)");
    }
    MYR_TRY(walk(doc_.root(), -1, 0));
    if (topo_.nodes.empty()) return doc_.error(doc_.root(), "no NUMANode objects: expected at least one");
    MYR_TRY(walkIo(doc_.root(), 0));
    MYR_TRY(readHwlocNvlinks(doc_, byGp_, topo_));
    addCpuInterconnect(topo_);
    return std::move(topo_);
  }

 private:
  static constexpr int kMaxDepth = 64;

  static std::optional<uint64_t> gpIndex(pugi::xml_node o) {
    if (!o.attribute("gp_index")) return std::nullopt;  // hwloc v1 has none
    return o.attribute("gp_index").as_ullong();
  }

  // Visits every <object>, depth first, with the os_index of the enclosing Package; creates the NUMA nodes.
  Status walk(pugi::xml_node parent, int pkg, int depth) {
    if (depth > kMaxDepth) return doc_.error(parent, "<object> nested too deep: expected at most 64 levels");
    for (pugi::xml_node o : parent.children("object")) {
      int inner = pkg;
      if (isType(o, "Package")) {
        MYR_ASSIGN_OR_RETURN(inner, doc_.intAttr(o, "os_index", -1));
        packageVendor_[inner] = infoValue(o, "CPUVendor");
        if (auto gp = gpIndex(o)) packageGp_[*gp] = inner;
      }
      if (isType(o, "NUMANode")) MYR_TRY(addNuma(o, inner));
      MYR_TRY(walk(o, inner, depth + 1));
    }
    return Status::ok();
  }

  static std::string infoValue(pugi::xml_node o, const char* name) {
    for (pugi::xml_node i : o.children("info")) {
      if (std::string_view(i.attribute("name").value()) == name) return i.attribute("value").value();
    }
    return "";
  }

  Status addNuma(pugi::xml_node o, int pkg) {
    Node n;
    n.kind = NodeKind::kCpu;
    MYR_ASSIGN_OR_RETURN(n.numa, doc_.intAttr(o, "os_index", -1));
    if (n.numa < 0) return doc_.error(o, "NUMANode without os_index: expected os_index=\"N\"");
    if (cpuByNuma_.count(n.numa)) return doc_.error(o, "NUMANode os_index " + std::to_string(n.numa) + " twice");
    n.package = pkg;
    n.affinity = o.attribute("cpuset").value();
    n.cpuVendor = packageVendor_[pkg];
    int self = topo_.add(std::move(n));
    cpuByNuma_.emplace(topo_.nodes[self].numa, self);
    for (auto& [gp, p] : packageGp_) {
      if (p == pkg) byGp_.emplace(gp, self);  // a package's NVLink lands on its first NUMA node
    }
    return Status::ok();
  }

  // Walks the non-I/O objects; each host bridge found starts a PCI tree under the NUMA node in context.
  Status walkIo(pugi::xml_node parent, int depth) {
    if (depth > kMaxDepth) return doc_.error(parent, "<object> nested too deep: expected at most 64 levels");
    for (pugi::xml_node o : parent.children("object")) {
      if (isType(o, "Bridge") || isType(o, "PCIDev")) {
        MYR_TRY(readPci(o, contextCpu(parent), 0));
      } else {
        MYR_TRY(walkIo(o, depth + 1));
      }
    }
    return Status::ok();
  }

  int contextCpu(pugi::xml_node o) const {
    int numa = isType(o, "NUMANode") ? o.attribute("os_index").as_int(-1) : lowestBit(o.attribute("nodeset").value());
    auto it = cpuByNuma_.find(numa);
    return it != cpuByNuma_.end() ? it->second : 0;
  }

  Status readPci(pugi::xml_node o, int parent, int depth) {
    if (depth > kMaxDepth) return doc_.error(o, "PCI tree nested too deep: expected at most 64 levels");
    bool hostBridge = isType(o, "Bridge") && !o.attribute("pci_busid");
    int self = parent;
    if (!hostBridge && (isType(o, "Bridge") || isType(o, "PCIDev"))) {
      MYR_ASSIGN_OR_RETURN(self, addPci(o, parent));
    }
    if (isType(o, "PCIDev")) {  // hwloc puts PCI objects only under bridges
      for (pugi::xml_node c : o.children("object"))
        if (isType(c, "Bridge") || isType(c, "PCIDev"))
          return doc_.error(c, "PCI object inside a PCIDev: expected PCI objects only under a Bridge");
    }
    for (pugi::xml_node c : o.children("object")) {
      if (isType(c, "OSDev")) {
        if (self != parent) addOsDev(c, self);
        continue;
      }
      MYR_TRY(readPci(c, self, depth + 1));
    }
    return Status::ok();
  }

  Result<int> addPci(pugi::xml_node o, int parent) {
    Node n;
    MYR_ASSIGN_OR_RETURN(n.busId, doc_.busIdAttr(o, "pci_busid"));
    MYR_TRY(parsePciType(o, n));
    n.kind = pciKind(n.pciClass, n.vendor, isType(o, "Bridge"));
    if (std::string_view(o.attribute("subtype").value()) == "NVSwitch") n.kind = NodeKind::kNvSwitch;
    n.parent = parent;
    n.numa = topo_.nodes[parent].numa;
    if (topo_.findBusId(n.busId) >= 0) return doc_.error(o, "bus id " + n.busId + " appears twice");
    Link up;
    up.a = parent;
    MYR_ASSIGN_OR_RETURN(up.gbps, doc_.doubleAttr(o, "pci_link_speed"));
    up.b = topo_.add(std::move(n));
    topo_.links.push_back(up);
    if (auto gp = gpIndex(o)) byGp_[*gp] = up.b;
    return up.b;
  }

  // pci_type="0302 [10de:20b0] [10de:144e] a1": class, [vendor:device], [subsystem], revision.
  Status parsePciType(pugi::xml_node o, Node& n) {
    std::string_view t = o.attribute("pci_type").value();
    std::optional<uint32_t> cls = t.size() >= 15 ? parseHex(t.substr(0, 4), 0xffff) : std::nullopt;
    std::optional<uint32_t> vendor = cls && t.substr(4, 2) == " [" ? parseHex(t.substr(6, 4), 0xffff) : std::nullopt;
    std::optional<uint32_t> device = vendor && t[10] == ':' ? parseHex(t.substr(11, 4), 0xffff) : std::nullopt;
    if (!device) {
      return doc_.error(o, "pci_type=\"" + std::string(t) + "\": expected \"CCCC [vvvv:dddd] ...\" (class, ids)");
    }
    n.pciClass = *cls << 8;
    n.vendor = static_cast<uint16_t>(*vendor);
    n.device = static_cast<uint16_t>(*device);
    // The subsystem ids are optional here: without them the bridge is never flattened (pci_switch.h).
    std::optional<uint32_t> subVendor =
        t.size() >= 28 && t.substr(15, 3) == "] [" ? parseHex(t.substr(18, 4), 0xffff) : std::nullopt;
    std::optional<uint32_t> subDevice =
        subVendor && t[22] == ':' && t[27] == ']' ? parseHex(t.substr(23, 4), 0xffff) : std::nullopt;
    if (subDevice) {
      n.subsystemVendor = static_cast<uint16_t>(*subVendor);
      n.subsystemDevice = static_cast<uint16_t>(*subDevice);
    }
    return Status::ok();
  }

  // Network (2) and OpenFabrics (3) devices are ports of their NIC; cudaN / nvmlN give the GPU index.
  void addOsDev(pugi::xml_node o, int self) {
    Node& n = topo_.nodes[self];
    std::string name = o.attribute("name").value();
    int type = o.attribute("osdev_type").as_int(-1);
    if (auto gp = gpIndex(o)) byGp_[*gp] = self;
    if ((type == 2 || type == 3) && !name.empty()) {
      if (n.kind == NodeKind::kPciDevice) n.kind = NodeKind::kNic;
      // RDMA devices (mlx5_0) first: they name the NIC as NCCL and `nvidia-smi topo -m` do.
      auto at = n.ports.end();
      if (type == 3) {
        at = std::find_if(n.ports.begin(), n.ports.end(), [&](const NicPort& p) { return !rdmaNames_.count(p.name); });
        rdmaNames_.insert(name);
      }
      n.ports.insert(at, NicPort{name, 0, 0});
    }
    if (n.kind != NodeKind::kGpu) return;
    for (std::string_view prefix : {"cuda", "nvml"}) {
      if (name.rfind(prefix, 0) != 0 || (prefix == "nvml" && n.gpuIndex >= 0)) continue;
      int index = -1;
      std::string_view digits = std::string_view(name).substr(prefix.size());
      auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), index);
      if (ec == std::errc() && end == digits.data() + digits.size()) n.gpuIndex = index;
    }
  }

  const XmlDoc& doc_;
  Topology topo_;
  std::map<int, int> cpuByNuma_;
  std::map<int, std::string> packageVendor_;
  std::map<uint64_t, int> packageGp_;
  std::map<uint64_t, int> byGp_;
  std::set<std::string> rdmaNames_;
};

}  // namespace

Result<Topology> readHwlocXml(const XmlDoc& doc) {
  return HwlocReader(doc).read();
}

}  // namespace myriad
