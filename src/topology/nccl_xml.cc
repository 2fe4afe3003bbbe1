// Reads NCCL topology XML (<system version="1">, as NCCL_TOPO_FILE takes and NCCL_TOPO_DUMP_FILE writes;
// RCCL's version 2 too): full dumps with <gpu>/<nvlink>/<nic>/<net>, and partial cloud files with only
// <cpu> and <pci>. Nothing is invented: a file without <nvlink> gives a Topology without NVLink.
#include <vector>

#include "topology/link_speed.h"
#include "topology/pci.h"
#include "topology/xml_doc.h"

namespace myriad {
namespace {

struct PendingNvlink {
  int gpu;
  pugi::xml_node element;
};

class NcclReader {
 public:
  explicit NcclReader(const XmlDoc& doc) : doc_(doc) {}

  Result<Topology> read() {
    pugi::xml_node root = doc_.root();
    if (!root.attribute("version"))
      return doc_.error(root, "<system> without version: expected <system version=\"1\">");
    MYR_ASSIGN_OR_RETURN(int version, doc_.intAttr(root, "version", 0));
    (void)version;  // 1 (NCCL) and 2 (RCCL) share the elements read here
    for (pugi::xml_node cpu : root.children("cpu")) MYR_TRY(readCpu(cpu));
    for (const PendingNvlink& p : nvlinks_) MYR_TRY(resolveNvlink(p));
    addCpuInterconnect(topo_);
    return std::move(topo_);
  }

 private:
  Status readCpu(pugi::xml_node cpu) {
    if (!cpu.attribute("numaid")) return doc_.error(cpu, "<cpu> without numaid: expected <cpu numaid=\"N\">");
    Node n;
    n.kind = NodeKind::kCpu;
    MYR_ASSIGN_OR_RETURN(n.numa, doc_.intAttr(cpu, "numaid", -1));
    n.affinity = cpu.attribute("affinity").value();
    n.cpuVendor = cpu.attribute("vendor").value();
    n.arch = cpu.attribute("arch").value();
    int self = topo_.add(std::move(n));
    for (pugi::xml_node child : cpu.children()) {
      if (std::string_view(child.name()) == "pci") MYR_TRY(readPci(child, self));
      if (std::string_view(child.name()) == "nic") MYR_TRY(readNic(child, self, -1));
    }
    return Status::ok();
  }

  Status readPci(pugi::xml_node pci, int parent) {
    // Real PCI trees are a handful of levels deep; the limit keeps a hostile file from exhausting the stack.
    if (++depth_ > kMaxDepth) return doc_.error(pci, "<pci> nested too deep: expected at most 32 levels");
    Status s = readPciNode(pci, parent);
    --depth_;
    return s;
  }

  Status readPciNode(pugi::xml_node pci, int parent) {
    Node n;
    MYR_ASSIGN_OR_RETURN(n.busId, doc_.busIdAttr(pci, "busid"));
    MYR_ASSIGN_OR_RETURN(n.pciClass, doc_.hexAttr(pci, "class", 0xffffff));
    MYR_ASSIGN_OR_RETURN(uint32_t vendor, doc_.hexAttr(pci, "vendor", 0xffff));
    MYR_ASSIGN_OR_RETURN(uint32_t device, doc_.hexAttr(pci, "device", 0xffff));
    MYR_ASSIGN_OR_RETURN(uint32_t subVendor, doc_.hexAttr(pci, "subsystem_vendor", 0xffff));
    MYR_ASSIGN_OR_RETURN(uint32_t subDevice, doc_.hexAttr(pci, "subsystem_device", 0xffff));
    n.vendor = static_cast<uint16_t>(vendor);
    n.device = static_cast<uint16_t>(device);
    n.subsystemVendor = static_cast<uint16_t>(subVendor);
    n.subsystemDevice = static_cast<uint16_t>(subDevice);
    n.kind = pciKind(n.pciClass, n.vendor, static_cast<bool>(pci.child("pci")));
    if (n.kind == NodeKind::kPciDevice && pci.child("nic")) n.kind = NodeKind::kNic;
    n.parent = parent;
    n.numa = topo_.nodes[parent].numa;
    if (topo_.findBusId(n.busId) >= 0) return doc_.error(pci, "bus id " + n.busId + " appears twice");
    Link up;
    up.a = parent;
    up.pcieGen = pcieGenFromSpeed(pci.attribute("link_speed").value());
    MYR_ASSIGN_OR_RETURN(up.pcieWidth, doc_.intAttr(pci, "link_width", 0));
    if (up.pcieWidth < 0 || up.pcieWidth > 32) return doc_.error(pci, "link_width: expected 0 to 32 lanes");
    up.gbps = pcieGbps(up.pcieGen, up.pcieWidth);
    up.b = topo_.add(std::move(n));
    topo_.links.push_back(up);
    for (pugi::xml_node child : pci.children()) {
      std::string_view name = child.name();
      if (name == "pci") MYR_TRY(readPci(child, up.b));
      if (name == "gpu" && topo_.nodes[up.b].kind == NodeKind::kGpu) MYR_TRY(readGpu(child, up.b));
      if (name == "nic") MYR_TRY(readNic(child, parent, up.b));
    }
    return Status::ok();
  }

  Status readGpu(pugi::xml_node gpu, int self) {
    MYR_ASSIGN_OR_RETURN(topo_.nodes[self].gpuIndex, doc_.intAttr(gpu, "dev", -1));
    MYR_ASSIGN_OR_RETURN(topo_.nodes[self].sm, doc_.intAttr(gpu, "sm", 0));
    for (pugi::xml_node nv : gpu.children("nvlink")) nvlinks_.push_back({self, nv});
    return Status::ok();
  }

  // A <nic> under a <pci> describes that function; one straight under <cpu> is a NIC of its own.
  Status readNic(pugi::xml_node nic, int parent, int self) {
    if (self < 0) {
      Node n;
      n.kind = NodeKind::kNic;
      n.parent = parent;
      n.numa = topo_.nodes[parent].numa;
      self = topo_.add(std::move(n));
    }
    for (pugi::xml_node net : nic.children("net")) {
      NicPort p;
      p.name = net.attribute("name").value();
      if (p.name.empty()) return doc_.error(net, "<net> without name: expected <net name=\"mlx5_0\">");
      MYR_ASSIGN_OR_RETURN(p.port, doc_.intAttr(net, "port", 0));
      MYR_ASSIGN_OR_RETURN(p.speedMbps, doc_.intAttr(net, "speed", 0));
      topo_.nodes[self].ports.push_back(std::move(p));
    }
    return Status::ok();
  }

  Status resolveNvlink(const PendingNvlink& p) {
    MYR_ASSIGN_OR_RETURN(std::string target, doc_.busIdAttr(p.element, "target"));
    MYR_ASSIGN_OR_RETURN(uint32_t tclass, doc_.hexAttr(p.element, "tclass", 0xffffff));
    MYR_ASSIGN_OR_RETURN(int count, doc_.intAttr(p.element, "count", 1));
    if (count < 1 || count > 64) return doc_.error(p.element, "<nvlink> count: expected 1 to 64");
    if (target == topo_.nodes[p.gpu].busId) return Status::ok();  // a link to itself says nothing
    int other = topo_.findBusId(target);
    if (other < 0 && (tclass >> 8) == 0x0680) other = addNvSwitch(target, tclass);
    if (other < 0 && (tclass >> 16) != 0x03) other = topo_.cpuOf(p.gpu);  // NVLink to the CPU (POWER)
    if (other < 0 || topo_.nvlinkBetween(p.gpu, other)) return Status::ok();
    Link l;
    l.kind = LinkKind::kNvlink;
    l.a = p.gpu;
    l.b = other;
    l.count = count;
    l.gbps = count * nvlinkGbpsPerLink(topo_.nodes[p.gpu].sm);
    topo_.links.push_back(l);
    return Status::ok();
  }

  int addNvSwitch(const std::string& busId, uint32_t tclass) {
    Node n;
    n.kind = NodeKind::kNvSwitch;
    n.busId = busId;
    n.pciClass = tclass;
    return topo_.add(std::move(n));
  }

  static constexpr int kMaxDepth = 32;

  const XmlDoc& doc_;
  Topology topo_;
  int depth_ = 0;
  std::vector<PendingNvlink> nvlinks_;
};

}  // namespace

Result<Topology> readNcclXml(const XmlDoc& doc) {
  return NcclReader(doc).read();
}

}  // namespace myriad
