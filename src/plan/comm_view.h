// CommView: what an algorithm may know of the communicator it plans for — this rank, the number of ranks,
// how they sit on hosts, the machine's topology and the few settings plans depend on. Plain data, no
// resources: a plan made from a view does no I/O, so the same view type serves the host library, tests that
// step many ranks on one thread, and the simulator. The host layout is shared between the views of one
// communicator (ranks of a simulation share one), so a view costs O(1) memory per rank.
#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <vector>

namespace myriad {

struct Topology;

// Ranks grouped by host: hosts in order of their lowest rank, ranks in rank order within a host.
struct HostLayout {
  std::vector<std::vector<int>> hosts;
  std::vector<int> hostOf;      // rank -> index into hosts
  std::vector<int> localIndex;  // rank -> position within its host
  // The machines under the hosts: hosts emulated on one machine (MYRIAD_HOST_ID, network namespaces) share
  // its cores. machineOf: host -> machine; machineCores: machine -> the CPUs its ranks may use (0: unknown).
  // Empty: every host is a machine of its own, of unknown size.
  std::vector<int> machineOf;
  std::vector<int> machineCores;
  // G when every host has G ranks, numbered host by host (rank = host * G + local index); 0 otherwise, or
  // when the layout was assembled by hand. Set by the factories below: O(1) for plans that ask per rank.
  int evenHostSize = 0;

  int nranks() const { return static_cast<int>(hostOf.size()); }
  int machines() const {
    return machineOf.empty() ? static_cast<int>(hosts.size()) : static_cast<int>(machineCores.size());
  }
  int machineOfHost(int h) const { return machineOf.empty() ? h : machineOf[static_cast<size_t>(h)]; }
  int coresOf(int machine) const { return machineOf.empty() ? 0 : machineCores[static_cast<size_t>(machine)]; }
  // From any per-rank host label (host ids, or small integers in tests): equal labels share a host.
  static std::shared_ptr<const HostLayout> fromLabels(const std::vector<std::string>& labels);
  static std::shared_ptr<const HostLayout> fromHostOf(const std::vector<int>& hostOf);
  // n ranks on one host.
  static std::shared_ptr<const HostLayout> single(int n);
  // `base` with its hosts on machines: `machineOfRank` labels each rank's machine (equal labels share one),
  // `coresOfRank` the CPUs each rank may use (a machine has the fewest any of its ranks reports). A host's
  // machine is its first rank's.
  static std::shared_ptr<const HostLayout> onMachines(const HostLayout& base,
                                                      const std::vector<std::string>& machineOfRank,
                                                      const std::vector<int>& coresOfRank);
  // "4+4", "3+3+1": the sizes of the hosts in order.
  std::string describe() const;
  // "" when each host is its own machine of unknown size, else " on 1 machine of 2 cores" and the like.
  std::string describeMachines() const;
};

struct CommView {
  int rank = 0;
  std::shared_ptr<const HostLayout> layout;
  const Topology* topology = nullptr;     // this rank's machine; null where unknown (tests, the simulator)
  size_t chunkBytes = size_t{128} << 10;  // MYRIAD_CHUNK_BYTES: pipeline slice of the algorithms
  // The links the tuner's cost model prices messages on (settings every rank shares): ranks of one host
  // talk over shared memory unless MYRIAD_DISABLE_SHM, hosts over rdma when MYRIAD_NET=rdma, else tcp.
  bool hostShm = true;
  bool netRdma = false;

  int nranks() const { return layout->nranks(); }
  const std::vector<std::vector<int>>& hosts() const { return layout->hosts; }
  int hostOf(int r) const { return layout->hostOf[static_cast<size_t>(r)]; }
  int localIndex(int r) const { return layout->localIndex[static_cast<size_t>(r)]; }
};

}  // namespace myriad
