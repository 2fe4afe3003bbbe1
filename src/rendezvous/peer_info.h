// PeerInfo: what each rank tells every other at rendezvous (identity, host, addresses of its transports).
// Host identity comes from the machine (boot id, hostname, network namespace), never from launcher
// variables, so that ranks group into nodes correctly under any launcher; MYRIAD_HOST_ID overrides it.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "base/clock.h"
#include "base/config.h"
#include "base/socket.h"
#include "base/status.h"

namespace myriad {

struct PeerInfo {
  int rank = -1;
  int32_t pid = 0;
  std::string hostId;         // equal on ranks of one node
  std::string hostname;       // for messages
  std::string machineId;      // equal on ranks of one kernel (emulated hosts included): they share its CPUs
  int32_t cores = 0;          // CPUs this rank may run on (its affinity mask); 0: unknown
  uint64_t pidNamespace = 0;  // shared memory needs the same pid namespace (liveness checks use pids)
  SockAddr tcpAddr;           // the tcp transport's listener
  SockAddr livenessAddr;      // the liveness channel's UDP socket (core/liveness.h); unset when it is off
  std::string rdmaDevice;     // "mlx5_0:1" when the rdma transport works on this rank, else empty

  void encode(class Writer& w) const;
  static Result<PeerInfo> decode(class Reader& r);
  // "rank 3 (node-b pid 4121)"
  std::string describe() const;
};

// This machine's identity: MYRIAD_HOST_ID, or boot id + hostname + network-namespace inode.
std::string localHostId(const Config& config);
std::string localHostname();
// The kernel's identity (boot id; the hostname where that is unreadable): ranks on one machine share its
// CPUs whatever hosts MYRIAD_HOST_ID or network namespaces make of them.
std::string localMachineId();
// The CPUs this process may run on (sched_getaffinity), at least 1.
int localCores();
uint64_t localPidNamespace();

}  // namespace myriad
