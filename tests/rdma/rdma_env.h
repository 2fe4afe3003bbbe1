// Environment of a forked rank of the rdma tests, set in the child before myrCommInitRank: rdma forced
// (MYRIAD_NET=rdma, shared memory off), even ranks on rxe1 and odd ranks on rxe2 (so that every pair of
// ranks of different parity crosses the veth pair), n QPs per peer, and the ACK timeout for emulation.
#pragma once

#include <cstdlib>
#include <string>

namespace myriad::test {

inline void useRdma(int rank, int qpsPerPeer) {
  setenv("MYRIAD_NET", "rdma", 1);
  setenv("MYRIAD_DISABLE_SHM", "1", 1);
  setenv("MYRIAD_IB_HCA", rank % 2 == 0 ? "=rxe1" : "=rxe2", 1);
  setenv("MYRIAD_IB_QPS_PER_PEER", std::to_string(qpsPerPeer).c_str(), 1);
  // Under qemu's emulation the usual ACK timeout (14, 67 ms) causes spurious retransmits.
  if (!std::getenv("MYRIAD_IB_TIMEOUT")) setenv("MYRIAD_IB_TIMEOUT", "18", 1);
}

// True when rxe-setup ran (inside the VM): RXE_READY=1.
inline bool rxeReady() {
  const char* v = std::getenv("RXE_READY");
  return v && std::string(v) == "1";
}

}  // namespace myriad::test
