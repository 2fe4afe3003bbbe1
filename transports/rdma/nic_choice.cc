// The topology's NIC for a rank (see nic_choice.h).
#include "transports/rdma/nic_choice.h"

#include <algorithm>
#include <cstdlib>
#include <set>

#include "topology/paths.h"

namespace myriad {

std::vector<int> cpusOfMask(const std::string& mask) {
  std::vector<uint32_t> words;  // most significant first
  size_t pos = 0;
  while (pos < mask.size()) {
    size_t comma = std::min(mask.find(',', pos), mask.size());
    std::string w = mask.substr(pos, comma - pos);
    if (w.rfind("0x", 0) == 0 || w.rfind("0X", 0) == 0) w = w.substr(2);
    char* end = nullptr;
    unsigned long v = std::strtoul(w.c_str(), &end, 16);  // hwloc writes a zero word as nothing: ",,"
    if (*end != '\0' || v > 0xffffffffUL) return {};
    words.push_back(static_cast<uint32_t>(v));
    pos = comma + 1;
  }
  std::vector<int> cpus;
  for (size_t i = 0; i < words.size(); ++i) {
    const int base = static_cast<int>((words.size() - 1 - i) * 32);
    for (int b = 0; b < 32; ++b)
      if (words[i] >> b & 1u) cpus.push_back(base + b);
  }
  std::sort(cpus.begin(), cpus.end());
  return cpus;
}

int numaOfCpus(const Topology& topo, const std::vector<int>& cpus, std::string* why) {
  if (cpus.empty()) {
    *why = "the rank's CPU affinity is unknown";
    return -1;
  }
  std::set<int> numas;
  std::set<int> uncovered(cpus.begin(), cpus.end());
  for (int i : topo.indicesOf(NodeKind::kCpu)) {
    const Node& n = topo.nodes[static_cast<size_t>(i)];
    std::vector<int> mine = cpusOfMask(n.affinity);
    for (int c : cpus)
      if (std::binary_search(mine.begin(), mine.end(), c)) {
        numas.insert(n.numa);
        uncovered.erase(c);
      }
  }
  if (!uncovered.empty()) {
    *why =
        "the topology's NUMA nodes do not list CPU " + std::to_string(*uncovered.begin()) + " of the rank's affinity";
    return -1;
  }
  if (numas.size() > 1) {
    std::string list;
    for (int n : numas) list += (list.empty() ? "" : ",") + std::to_string(n);
    *why = "the rank's CPU affinity spans NUMA nodes " + list + " (pin it to one to choose its NIC)";
    return -1;
  }
  return *numas.begin();
}

NicChoice topologyNic(const Topology& topo, const NicWish& wish) {
  NicChoice c;
  if (topo.count(NodeKind::kNic) == 0) {
    c.why = "the topology has no NIC";
    return c;
  }
  if (wish.gpu >= 0) {
    c.via = "GPU " + std::to_string(wish.gpu);
    std::vector<int> gpus = orderedGpus(topo);
    std::vector<int> nics = preferredNics(topo);
    auto it = std::find(gpus.begin(), gpus.end(), topo.findGpu(wish.gpu));
    if (topo.findGpu(wish.gpu) < 0 || it == gpus.end()) {
      c.why = "the topology has no GPU " + std::to_string(wish.gpu);
      return c;
    }
    c.nic = nics[static_cast<size_t>(it - gpus.begin())];
  } else {
    std::string why;
    const int numa = numaOfCpus(topo, wish.cpus, &why);
    if (numa < 0) {
      c.why = why;
      return c;
    }
    c.via = "NUMA node " + std::to_string(numa);
    c.nic = nicForHostRank(topo, numa, wish.spread);
  }
  if (c.nic < 0) {
    c.why = "the topology assigns no NIC to " + c.via;
    return c;
  }
  c.ports = topo.nodes[static_cast<size_t>(c.nic)].ports;
  if (c.ports.empty()) {
    c.why = "the topology's NIC " + nicName(topo, c.nic) + " for " + c.via + " has no named port";
    c.nic = -1;
  }
  return c;
}

int matchNic(const std::vector<IbPortName>& candidates, const NicChoice& choice, std::string* why) {
  if (choice.nic < 0) {
    *why = choice.why;
    return -1;
  }
  // The device and port the topology names; else the device's first usable port (files disagree on what
  // "port" counts: NCCL's XML of some servers numbers the ports of one card across its functions).
  for (bool exact : {true, false})
    for (const NicPort& p : choice.ports)
      for (size_t i = 0; i < candidates.size(); ++i)
        if (candidates[i].device == p.name && (!exact || p.port <= 0 || p.port == candidates[i].port))
          return static_cast<int>(i);
  std::string names;
  for (const NicPort& p : choice.ports)
    names += (names.empty() ? "" : ", ") + p.name + (p.port > 0 ? ":" + std::to_string(p.port) : "");
  std::string have;
  for (const IbPortName& c : candidates) have += (have.empty() ? "" : ", ") + c.device + ":" + std::to_string(c.port);
  *why = "the topology's NIC for " + choice.via + " (" + names + ") is not among the usable ports (" + have + ")";
  return -1;
}

}  // namespace myriad
