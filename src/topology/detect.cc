// detectMachine: hwloc (or sysfs NUMA nodes without it), then sysfs networks and RDMA, then NVML; the
// per-process cache behind localTopology; and the merge of a topology file with what was detected.
#include "topology/detect.h"

#include <algorithm>
#include <map>
#include <mutex>

#include "base/log.h"
#include "topology/detect_internal.h"
#include "topology/topology_file.h"

namespace myriad {

Result<Detection> detectMachineSysfs() {
  Detection d;
  MYR_TRY(detail::sysfsNumaNodes(d.topo));
  addCpuInterconnect(d.topo);
  d.notes.push_back("sysfs: " + std::to_string(d.topo.count(NodeKind::kCpu)) + " NUMA nodes");
  detail::sysfsRdma(d);  // first: RDMA names (mlx5_0) name a NIC before its netdev (ib0) does
  detail::sysfsNetworks(d);
  detail::nvmlGpus(d);
  d.cpus = detail::countCpus(detail::readLine("/sys/devices/system/cpu/online"));
  return d;
}

Result<Detection> detectMachine() {
  Result<Topology> h = detail::hwlocTopology();
  if (!h.isOk()) {
    Result<Detection> d = detectMachineSysfs();
    if (d.isOk()) d.value().notes.insert(d.value().notes.begin(), h.status().message() + "; sysfs only");
    return d;
  }
  Detection d;
  d.topo = h.take();
  d.notes.push_back("hwloc: " + std::to_string(d.topo.count(NodeKind::kCpu)) + " NUMA nodes, " +
                    std::to_string(d.topo.nodes.size()) + " nodes");
  detail::sysfsRdma(d);  // first: RDMA names (mlx5_0) name a NIC before its netdev (ib0) does
  detail::sysfsNetworks(d);
  detail::nvmlGpus(d);
  d.cpus = detail::countCpus(detail::readLine("/sys/devices/system/cpu/online"));
  return d;
}

namespace {

void fillFrom(Node& into, const Node& from) {
  if (into.kind == NodeKind::kPciDevice && (from.kind == NodeKind::kGpu || from.kind == NodeKind::kNic))
    into.kind = from.kind;
  if (into.gpuIndex < 0) into.gpuIndex = from.gpuIndex;
  if (into.sm == 0) into.sm = from.sm;
  if (into.numa < 0) into.numa = from.numa;
  for (const NicPort& p : from.ports) {
    auto it = std::find_if(into.ports.begin(), into.ports.end(), [&](const NicPort& q) { return q.name == p.name; });
    if (it == into.ports.end()) {
      into.ports.push_back(p);
    } else if (it->speedMbps == 0) {
      it->speedMbps = p.speedMbps;
    }
  }
}

int cpuFor(const Topology& topo, int numa) {
  std::vector<int> cpus = topo.indicesOf(NodeKind::kCpu);
  for (int c : cpus) {
    if (topo.nodes[c].numa == numa) return c;
  }
  return cpus.empty() ? -1 : cpus.front();
}

}  // namespace

Topology mergeDetected(Topology file, const Topology& detected) {
  std::map<int, int> into;  // detected node -> file node
  for (size_t i = 0; i < detected.nodes.size(); ++i) {
    const Node& n = detected.nodes[i];
    if (n.busId.empty()) continue;
    int f = file.findBusId(n.busId);
    if (f >= 0) {
      fillFrom(file.nodes[f], n);
    } else if (n.kind == NodeKind::kGpu || n.kind == NodeKind::kNic) {
      int cpu = cpuFor(file, n.numa);
      if (cpu < 0) continue;
      Node copy = n;
      copy.parent = cpu;
      copy.numa = file.nodes[cpu].numa;
      f = file.add(std::move(copy));
      Link up;
      up.a = cpu;
      up.b = f;
      for (const Link& l : detected.links) {
        if (l.kind == LinkKind::kPcie && l.b == static_cast<int>(i))
          up = Link{l.kind, cpu, f, l.pcieGen, l.pcieWidth, 0, l.gbps};
      }
      file.links.push_back(up);
    } else if (n.kind == NodeKind::kNvSwitch) {
      Node copy = n;
      copy.parent = -1;
      f = file.add(std::move(copy));
    }
    if (f >= 0) into[static_cast<int>(i)] = f;
  }
  auto hasNvlink = [&](int node) {
    for (const Link& l : file.links) {
      if (l.kind == LinkKind::kNvlink && (l.a == node || l.b == node)) return true;
    }
    return false;
  };
  std::vector<Link> added;
  for (const Link& l : detected.links) {
    if (l.kind != LinkKind::kNvlink || !into.count(l.a) || !into.count(l.b)) continue;
    int a = into[l.a], b = into[l.b];
    if (file.nodes[a].kind == NodeKind::kGpu && hasNvlink(a)) continue;  // the file's NVLinks win
    Link copy = l;
    copy.a = a;
    copy.b = b;
    added.push_back(copy);
  }
  file.links.insert(file.links.end(), added.begin(), added.end());
  return file;
}

Result<Topology> localTopology(const std::string& topoFile) {
  static std::mutex mu;
  static bool detectedOnce = false;
  static Topology detected;
  static std::map<std::string, Result<Topology>> files;
  std::lock_guard<std::mutex> lock(mu);
  if (!detectedOnce) {
    detectedOnce = true;
    Result<Detection> d = detectMachine();
    if (d.isOk()) {
      detected = std::move(d.value().topo);
      for (const std::string& note : d.value().notes) MYR_LOG(kInfo, kInit, -1, "topology: " + note);
    } else {
      MYR_LOG(kWarn, kInit, -1, "topology detection failed, continuing without: " + d.status().message());
    }
  }
  if (topoFile.empty()) return detected;
  auto it = files.find(topoFile);
  if (it == files.end()) {
    Result<Topology> loaded = loadTopologyFile(topoFile);
    if (loaded.isOk()) loaded = mergeDetected(loaded.take(), detected);
    it = files.emplace(topoFile, std::move(loaded)).first;
  }
  if (!it->second.isOk()) return Status(it->second.status()).addContext("MYRIAD_TOPO_FILE");
  return it->second.value();
}

}  // namespace myriad
