// sysfs readers: NUMA nodes (/sys/devices/system/node), the PCI bridges above a device (its realpath under
// /sys/devices/pciDDDD:BB), network interfaces (getifaddrs + /sys/class/net/X/device, speed) and RDMA
// devices (/sys/class/infiniband: ports, rates, GID tables). Unreadable entries are skipped, never fatal.
#include <arpa/inet.h>
#include <dirent.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netinet/in.h>
#include <sys/utsname.h>

#include <algorithm>
#include <climits>
#include <cstdlib>
#include <fstream>
#include <map>
#include <sstream>

#include "topology/detect_internal.h"
#include "topology/link_speed.h"
#include "topology/pci.h"

namespace myriad::detail {
namespace {

std::vector<std::string> listDir(const std::string& dir) {
  std::vector<std::string> out;
  DIR* d = opendir(dir.c_str());
  if (!d) return out;
  while (dirent* e = readdir(d)) {
    if (e->d_name[0] != '.') out.push_back(e->d_name);
  }
  closedir(d);
  std::sort(out.begin(), out.end());
  return out;
}

std::string realPath(const std::string& path) {
  char buf[PATH_MAX];
  return realpath(path.c_str(), buf) ? std::string(buf) : std::string();
}

// The PCI functions on a sysfs device path, outermost first ("/sys/devices/pci0000:00/0000:00:03.0/virtio2"
// -> {"0000:00:03.0"}).
std::vector<std::string> pciChain(const std::string& path) {
  std::vector<std::string> out;
  std::istringstream in(path);
  for (std::string part; std::getline(in, part, '/');) {
    if (auto bus = normalizeBusId(part)) out.push_back(*bus);
  }
  return out;
}

// The PCI function a sysfs device belongs to (the innermost on its path), "" when it is not on PCI.
std::string busIdOfDevice(const std::string& deviceLink) {
  std::string p = realPath(deviceLink);
  if (p.empty()) return "";
  std::vector<std::string> chain = pciChain(p);
  return chain.empty() ? "" : chain.back();
}

uint32_t hexFile(const std::string& path, uint32_t max) {
  return parseHex(readLine(path), max).value_or(0);
}

int cpuOfNuma(const Topology& topo, int numa) {
  for (int c : topo.indicesOf(NodeKind::kCpu)) {
    if (topo.nodes[c].numa == numa) return c;
  }
  std::vector<int> cpus = topo.indicesOf(NodeKind::kCpu);
  return cpus.empty() ? -1 : cpus.front();
}

std::string cpuVendor() {
  std::ifstream in("/proc/cpuinfo");
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("vendor_id", 0) == 0) {
      size_t colon = line.find(':');
      return colon == std::string::npos ? "" : line.substr(colon + 2);
    }
  }
  return "";
}

}  // namespace

std::string readLine(const std::string& path) {
  std::ifstream in(path);
  std::string line;
  std::getline(in, line);
  return line;
}

std::vector<int> parseCpuList(const std::string& list) {
  std::vector<int> out;
  std::istringstream in(list);
  for (std::string part; std::getline(in, part, ',');) {
    int lo = 0, hi = 0;
    char dash = 0;
    std::istringstream r(part);
    if (!(r >> lo)) continue;
    if (r >> dash >> hi) {
      for (int c = lo; c <= hi && c - lo < 65536; ++c) out.push_back(c);
    } else {
      out.push_back(lo);
    }
  }
  return out;
}

std::string maskFromCpuList(const std::string& list) {
  std::vector<int> cpus = parseCpuList(list);
  if (cpus.empty()) return "";
  int maxCpu = *std::max_element(cpus.begin(), cpus.end());
  std::vector<uint32_t> words(static_cast<size_t>(maxCpu / 32 + 1), 0);
  for (int c : cpus) words[static_cast<size_t>(c / 32)] |= 1u << (c % 32);
  std::string out;
  char buf[16];
  for (size_t i = words.size(); i-- > 0;) {
    std::snprintf(buf, sizeof(buf), "%08x", words[i]);
    out += (out.empty() ? "" : ",") + std::string(buf);
  }
  return out;
}

int countCpus(const std::string& list) {
  return static_cast<int>(parseCpuList(list).size());
}

Status sysfsNumaNodes(Topology& topo) {
  std::string base = "/sys/devices/system/node/";
  std::string vendor = cpuVendor();
  utsname u{};
  std::string arch = uname(&u) == 0 ? u.machine : "";
  std::vector<std::pair<int, std::string>> nodes;
  for (const std::string& e : listDir(base)) {
    if (e.rfind("node", 0) != 0 || e.size() < 5 || e.find_first_not_of("0123456789", 4) != std::string::npos) continue;
    nodes.emplace_back(std::atoi(e.c_str() + 4), base + e);
  }
  std::sort(nodes.begin(), nodes.end());
  if (nodes.empty()) nodes.emplace_back(0, "");  // a kernel without NUMA: one node with every CPU
  for (const auto& [id, dir] : nodes) {
    Node n;
    n.kind = NodeKind::kCpu;
    n.numa = id;
    std::string list = dir.empty() ? readLine("/sys/devices/system/cpu/online") : readLine(dir + "/cpulist");
    n.affinity = maskFromCpuList(list);
    std::vector<int> cpus = parseCpuList(list);
    if (!cpus.empty()) {
      std::string pkg =
          readLine("/sys/devices/system/cpu/cpu" + std::to_string(cpus.front()) + "/topology/physical_package_id");
      n.package = pkg.empty() ? -1 : std::atoi(pkg.c_str());
    }
    n.cpuVendor = vendor;
    n.arch = arch;
    topo.add(std::move(n));
  }
  if (topo.nodes.empty()) return systemError("sysfs: no NUMA node and no CPU found under /sys/devices/system", 0);
  return Status::ok();
}

int ensurePciNode(Topology& topo, const std::string& busId) {
  if (int i = topo.findBusId(busId); i >= 0) return i;
  std::string dev = "/sys/bus/pci/devices/" + busId;
  std::vector<std::string> chain = pciChain(realPath(dev));
  std::string numaText = readLine(dev + "/numa_node");
  int numa = numaText.empty() ? -1 : std::atoi(numaText.c_str());
  int parent = cpuOfNuma(topo, numa);
  if (parent < 0) return -1;
  if (chain.empty() || chain.back() != busId) chain = {busId};  // no sysfs entry: hang it off its CPU
  for (size_t i = 0; i < chain.size(); ++i) {
    if (int existing = topo.findBusId(chain[i]); existing >= 0) {
      parent = existing;
      continue;
    }
    std::string d = "/sys/bus/pci/devices/" + chain[i];
    Node n;
    n.busId = chain[i];
    n.pciClass = hexFile(d + "/class", 0xffffff);
    n.vendor = static_cast<uint16_t>(hexFile(d + "/vendor", 0xffff));
    n.device = static_cast<uint16_t>(hexFile(d + "/device", 0xffff));
    n.subsystemVendor = static_cast<uint16_t>(hexFile(d + "/subsystem_vendor", 0xffff));
    n.subsystemDevice = static_cast<uint16_t>(hexFile(d + "/subsystem_device", 0xffff));
    n.kind = pciKind(n.pciClass, n.vendor, i + 1 < chain.size());
    n.parent = parent;
    n.numa = topo.nodes[parent].numa;
    Link up;
    up.a = parent;
    up.pcieGen = pcieGenFromSpeed(readLine(d + "/current_link_speed"));
    up.pcieWidth = std::atoi(readLine(d + "/current_link_width").c_str());
    if (up.pcieWidth < 0 || up.pcieWidth > 32) up.pcieWidth = 0;
    up.gbps = pcieGbps(up.pcieGen, up.pcieWidth);
    up.b = topo.add(std::move(n));
    topo.links.push_back(up);
    parent = up.b;
  }
  return parent;
}

namespace {

void addPort(Topology& topo, int nic, const std::string& name, int port, int speedMbps) {
  Node& n = topo.nodes[nic];
  if (n.kind == NodeKind::kPciDevice) n.kind = NodeKind::kNic;
  for (NicPort& p : n.ports) {
    if (p.name == name) {
      if (speedMbps > 0) p.speedMbps = speedMbps;
      if (port > 0) p.port = port;
      return;
    }
  }
  n.ports.push_back(NicPort{name, port, std::max(speedMbps, 0)});
}

std::string addressText(const sockaddr* sa) {
  char buf[INET6_ADDRSTRLEN] = {0};
  if (sa->sa_family == AF_INET)
    inet_ntop(AF_INET, &reinterpret_cast<const sockaddr_in*>(sa)->sin_addr, buf, sizeof(buf));
  if (sa->sa_family == AF_INET6)
    inet_ntop(AF_INET6, &reinterpret_cast<const sockaddr_in6*>(sa)->sin6_addr, buf, sizeof(buf));
  return buf;
}

}  // namespace

void sysfsNetworks(Detection& d) {
  std::map<std::string, Detection::Interface> byName;
  ifaddrs* list = nullptr;
  if (getifaddrs(&list) != 0) {
    d.notes.push_back("getifaddrs failed: errno " + std::to_string(errno));
  }
  for (ifaddrs* a = list; a; a = a->ifa_next) {
    Detection::Interface& i = byName[a->ifa_name];
    i.name = a->ifa_name;
    if (a->ifa_addr && (a->ifa_addr->sa_family == AF_INET || a->ifa_addr->sa_family == AF_INET6))
      i.addresses.push_back(addressText(a->ifa_addr));
  }
  if (list) freeifaddrs(list);
  int attached = 0;
  for (auto& [name, i] : byName) {
    i.busId = busIdOfDevice("/sys/class/net/" + name + "/device");
    if (!i.busId.empty()) {
      int node = ensurePciNode(d.topo, i.busId);
      if (node >= 0) {
        std::string speed = readLine("/sys/class/net/" + name + "/speed");  // Mb/s; -1 or unreadable when down
        addPort(d.topo, node, name, 0, speed.empty() ? 0 : std::atoi(speed.c_str()));
        ++attached;
      }
    }
    d.interfaces.push_back(i);
  }
  d.notes.push_back("getifaddrs: " + std::to_string(byName.size()) + " interfaces, " + std::to_string(attached) +
                    " on PCI devices");
}

void sysfsRdma(Detection& d) {
  std::string base = "/sys/class/infiniband/";
  std::vector<std::string> devices = listDir(base);
  if (devices.empty()) {
    d.notes.push_back("RDMA: no devices in /sys/class/infiniband");
    return;
  }
  for (const std::string& name : devices) {
    Detection::RdmaDevice r;
    r.name = name;
    r.busId = busIdOfDevice(base + name + "/device");
    int node = r.busId.empty() ? -1 : ensurePciNode(d.topo, r.busId);
    for (const std::string& portDir : listDir(base + name + "/ports")) {
      int port = std::atoi(portDir.c_str());
      std::string p = base + name + "/ports/" + portDir;
      // "100 Gb/sec (4X EDR)"
      int gbps = std::atoi(readLine(p + "/rate").c_str());
      if (node >= 0) addPort(d.topo, node, name, port, gbps * 1000);
      for (const std::string& idx : listDir(p + "/gids")) {
        std::string gid = readLine(p + "/gids/" + idx);
        if (gid.empty() || gid == "0000:0000:0000:0000:0000:0000:0000:0000") continue;
        Detection::Gid g;
        g.port = port;
        g.index = std::atoi(idx.c_str());
        g.gid = gid;
        g.type = readLine(p + "/gid_attrs/types/" + idx);
        g.netdev = readLine(p + "/gid_attrs/ndevs/" + idx);
        g.ipv4Mapped = gid.rfind("0000:0000:0000:0000:0000:ffff:", 0) == 0;
        r.gids.push_back(std::move(g));
      }
    }
    int v2 = 0;
    for (const Detection::Gid& g : r.gids) v2 += g.type == "RoCE v2";
    d.notes.push_back("RDMA " + name + " (" + (r.busId.empty() ? "not on PCI" : r.busId) +
                      "): " + std::to_string(r.gids.size()) + " GIDs, " + std::to_string(v2) + " RoCE v2");
    d.rdma.push_back(std::move(r));
  }
  d.notes.push_back("RDMA: " + std::to_string(devices.size()) + " devices");
}

}  // namespace myriad::detail
