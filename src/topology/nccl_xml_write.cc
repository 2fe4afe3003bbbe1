// Writes NCCL topology XML: <cpu> roots, the <pci> tree with class, ids and link speed, <gpu> with
// <nvlink> (each GPU lists every NVLink it has, as NCCL's dumps do) and <nic>/<net>. NVSwitches that are
// only NVLink ends appear as nvlink targets with their class, which is how the reader recreates them.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>

#include "topology/link_speed.h"
#include "topology/topology_file.h"

namespace myriad {
namespace {

std::string hex(uint32_t v, int digits) {
  char buf[16];
  std::snprintf(buf, sizeof(buf), "0x%0*x", digits, v);
  return buf;
}

std::string attr(const char* name, const std::string& value) {
  return std::string(" ") + name + "=\"" + value + "\"";
}

class NcclWriter {
 public:
  explicit NcclWriter(const Topology& topo) : topo_(topo) {}

  std::string write() {
    out_ = "<system version=\"1\">\n";
    for (size_t i = 0; i < topo_.nodes.size(); ++i) {
      if (topo_.nodes[i].kind == NodeKind::kCpu && topo_.nodes[i].parent < 0) writeCpu(static_cast<int>(i));
    }
    out_ += "</system>\n";
    return std::move(out_);
  }

 private:
  void writeCpu(int i) {
    const Node& n = topo_.nodes[i];
    out_ += "  <cpu" + attr("numaid", std::to_string(n.numa));
    if (!n.affinity.empty()) out_ += attr("affinity", n.affinity);
    if (!n.arch.empty()) out_ += attr("arch", n.arch);
    if (!n.cpuVendor.empty()) out_ += attr("vendor", n.cpuVendor);
    out_ += ">\n";
    writeChildren(i, 2);
    out_ += "  </cpu>\n";
  }

  void writeChildren(int parent, int depth) {
    for (size_t i = 0; i < topo_.nodes.size(); ++i) {
      if (topo_.nodes[i].parent != parent) continue;
      if (topo_.nodes[i].busId.empty()) {
        writeNic(static_cast<int>(i), depth);
      } else {
        writePci(static_cast<int>(i), depth);
      }
    }
  }

  // The class a reader needs to recreate the node's kind: a switch, GPU or NVSwitch whose class is unknown
  // or another's (hwloc may give none, or a bridge a device's class) is written with its kind's class, as
  // the <pci> and as an <nvlink> target.
  uint32_t writtenClass(const Node& n) const {
    // A switch is one by its children; a childless one only by its class.
    if (n.kind == NodeKind::kPciSwitch && (n.pciClass >> 8) != 0x0604 && !hasPciChildren(n)) return 0x060400;
    if (n.kind == NodeKind::kNvSwitch && (n.pciClass >> 8) != 0x0680) return 0x068000;
    if (n.kind == NodeKind::kGpu && (n.pciClass >> 16) != 0x03) return 0x030200;
    return n.pciClass;
  }

  void writePci(int i, int depth) {
    const Node& n = topo_.nodes[i];
    std::string pad(2 * depth, ' ');
    out_ += pad + "<pci" + attr("busid", n.busId);
    if (uint32_t c = writtenClass(n)) out_ += attr("class", hex(c, 6));
    if (n.vendor) out_ += attr("vendor", hex(n.vendor, 4));
    if (n.device) out_ += attr("device", hex(n.device, 4));
    if (n.subsystemVendor) out_ += attr("subsystem_vendor", hex(n.subsystemVendor, 4));
    if (n.subsystemDevice) out_ += attr("subsystem_device", hex(n.subsystemDevice, 4));
    const Link* up = upLink(i);
    out_ += attr("link_speed", pcieSpeedName(up ? up->pcieGen : 0));
    out_ += attr("link_width", std::to_string(up ? up->pcieWidth : 0));
    out_ += ">\n";
    if (n.kind == NodeKind::kGpu) writeGpu(i, depth + 1);
    if (!n.ports.empty()) writeNic(i, depth + 1);
    writeChildren(i, depth + 1);
    out_ += pad + "</pci>\n";
  }

  void writeGpu(int i, int depth) {
    const Node& n = topo_.nodes[i];
    std::string pad(2 * depth, ' ');
    out_ += pad + "<gpu";
    if (n.gpuIndex >= 0) out_ += attr("dev", std::to_string(n.gpuIndex));
    if (n.sm) out_ += attr("sm", std::to_string(n.sm));
    out_ += ">\n";
    for (const Link& l : topo_.links) {
      if (l.kind != LinkKind::kNvlink || (l.a != i && l.b != i)) continue;
      const int otherIndex = l.a == i ? l.b : l.a;
      const Node& other = topo_.nodes[otherIndex];
      // An NVLink to a CPU has no bus id of its own; NCCL spells the CPU end as a bridge class, which names
      // the GPU's own CPU: a link to another CPU (not in real machines; hwloc files can say so) cannot be
      // written.
      if (other.kind == NodeKind::kCpu && otherIndex != topo_.cpuOf(i)) continue;
      std::string target = other.kind == NodeKind::kCpu ? "ffffffff:ff:ff.f" : other.busId;
      uint32_t tclass = other.kind == NodeKind::kCpu ? 0x060400 : writtenClass(other);
      out_ += pad + "  <nvlink" + attr("target", target) + attr("count", std::to_string(linkCount(l, n))) +
              attr("tclass", hex(tclass, 6)) + "/>\n";
    }
    out_ += pad + "</gpu>\n";
  }

  bool hasPciChildren(const Node& n) const {
    const int self = static_cast<int>(&n - topo_.nodes.data());
    for (const Node& c : topo_.nodes)
      if (c.parent == self && !c.busId.empty()) return true;
    return false;
  }

  // NCCL XML counts NVLinks; hwloc gives only a bandwidth (count 0): then the count that bandwidth makes at
  // the GPU's per-link rate, 25 GB/s (NVLink 2 to 4) when the GPU's generation is unknown.
  static int linkCount(const Link& l, const Node& gpu) {
    if (l.count > 0) return std::min(l.count, 64);
    double per = nvlinkGbpsPerLink(gpu.sm);
    if (per <= 0) per = 25.0;
    return static_cast<int>(std::clamp(std::lround(l.gbps / per), 1L, 64L));
  }

  void writeNic(int i, int depth) {
    std::string pad(2 * depth, ' ');
    out_ += pad + "<nic>\n";
    for (const NicPort& p : topo_.nodes[i].ports) {
      out_ += pad + "  <net" + attr("name", p.name) + attr("port", std::to_string(p.port)) +
              attr("speed", std::to_string(p.speedMbps)) + "/>\n";
    }
    out_ += pad + "</nic>\n";
  }

  const Link* upLink(int i) const {
    for (const Link& l : topo_.links) {
      if (l.kind == LinkKind::kPcie && l.b == i) return &l;
    }
    return nullptr;
  }

  const Topology& topo_;
  std::string out_;
};

}  // namespace

std::string writeNcclXml(const Topology& topo) {
  return NcclWriter(topo).write();
}

}  // namespace myriad
