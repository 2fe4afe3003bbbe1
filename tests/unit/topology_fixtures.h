// Test helpers for the topology fixtures (tests/fixtures/topologies, real servers' files, see SOURCES.md):
// load one by name, and small queries that keep the per-file assertions to one line each.
#pragma once

#include <gtest/gtest.h>

#include <set>
#include <string>

#include "topology/topology.h"
#include "topology/topology_file.h"

namespace myriad::test {

inline std::string fixturePath(const std::string& name) {
  return std::string(MYRIAD_TOPO_FIXTURES) + "/" + name;
}

// Loads a fixture; a failure to load fails the test with the loader's message.
inline Topology loadFixture(const std::string& name) {
  Result<Topology> r = loadTopologyFile(fixturePath(name));
  EXPECT_TRUE(r.isOk()) << r.status().toString();
  return r.isOk() ? r.take() : Topology();
}

inline int numaCount(const Topology& t) {
  std::set<int> ids;
  for (int i : t.indicesOf(NodeKind::kCpu)) ids.insert(t.nodes[i].numa);
  return static_cast<int>(ids.size());
}

inline int nvlinkCount(const Topology& t) {
  int n = 0;
  for (const Link& l : t.links) n += l.kind == LinkKind::kNvlink;
  return n;
}

// Counts of a fixture; -1 leaves one unchecked.
struct Counts {
  int gpus = -1;
  int nics = -1;
  int numa = -1;
  int nvlinks = -1;
  int switches = -1;
  int nvswitches = -1;
};

inline void expectCounts(const Topology& t, const Counts& c) {
  auto check = [](int want, int got, const char* what) {
    if (want >= 0) {
      EXPECT_EQ(got, want) << what;
    }
  };
  check(c.gpus, t.count(NodeKind::kGpu), "GPUs");
  check(c.nics, t.count(NodeKind::kNic), "NICs");
  check(c.numa, numaCount(t), "NUMA nodes");
  check(c.nvlinks, nvlinkCount(t), "NVLinks");
  check(c.switches, t.count(NodeKind::kPciSwitch), "PCI switches");
  check(c.nvswitches, t.count(NodeKind::kNvSwitch), "NVSwitches");
}

// NUMA node of the node with this bus id (-2 if there is no such node).
inline int numaOfBus(const Topology& t, const std::string& busId) {
  int i = t.findBusId(busId);
  return i < 0 ? -2 : t.nodes[i].numa;
}

inline int parentOfBus(const Topology& t, const std::string& busId) {
  int i = t.findBusId(busId);
  return i < 0 ? -2 : t.nodes[i].parent;
}

inline NodeKind kindOfBus(const Topology& t, const std::string& busId) {
  int i = t.findBusId(busId);
  EXPECT_GE(i, 0) << busId;
  return i < 0 ? NodeKind::kPciDevice : t.nodes[i].kind;
}

}  // namespace myriad::test
