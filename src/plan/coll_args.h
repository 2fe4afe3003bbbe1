// The arguments of one collective call as every layer sees them (the C API fills them, dispatch validates
// and routes them, algorithms plan from them, executors bind their buffers). Plain data: this header
// includes no communicator, transport or executor.
#pragma once

#include <algorithm>
#include <cstddef>
#include <vector>

#include "myriad/myriad.h"

namespace myriad {

enum class CollKind {
  kAllReduce,
  kBroadcast,
  kReduce,
  kAllGather,
  kReduceScatter,
  kAllToAll,  // also all-to-all(v): counts and displacements in CollArgs
  kGather,
  kScatter,
  kBarrier,
  kSendRecv,  // a group's point-to-point calls, planned as one task
};

// The collective's name as the registry prefixes it ("allreduce" in "allreduce.ring").
const char* collName(CollKind kind);

// One point-to-point call of a group.
struct P2pCall {
  bool send = true;
  int peer = 0;
  void* buf = nullptr;  // const for sends
  size_t bytes = 0;
};

// The arguments of one call, in elements as the C API gives them (NCCL's meanings): for all-gather `count`
// is each rank's contribution, for reduce-scatter each rank's result, for all-to-all the count per peer.
struct CollArgs {
  CollKind kind = CollKind::kAllReduce;
  const void* sendbuff = nullptr;
  void* recvbuff = nullptr;
  size_t count = 0;
  myrDataType_t dtype = myrFloat32;
  myrRedOp_t op = myrSum;
  int root = 0;
  // all-to-all(v): per-peer counts and displacements in elements (empty for plain all-to-all).
  std::vector<size_t> sendCounts, sendDispls, recvCounts, recvDispls;
  std::vector<P2pCall> p2p;  // kSendRecv

  bool inPlace() const { return sendbuff == recvbuff; }
  size_t sendCount(int peer) const { return sendCounts.empty() ? count : sendCounts[static_cast<size_t>(peer)]; }
  size_t recvCount(int peer) const { return recvCounts.empty() ? count : recvCounts[static_cast<size_t>(peer)]; }
  size_t sendDispl(int peer) const {
    return sendDispls.empty() ? count * static_cast<size_t>(peer) : sendDispls[static_cast<size_t>(peer)];
  }
  // Elements from sendbuff up to the end of the last non-empty block sent (all-to-all(v)).
  size_t sendExtent(int nranks) const {
    size_t extent = 0;
    for (int p = 0; p < nranks; ++p)
      if (sendCount(p)) extent = std::max(extent, sendDispl(p) + sendCount(p));
    return extent;
  }
  size_t recvDispl(int peer) const {
    return recvDispls.empty() ? count * static_cast<size_t>(peer) : recvDispls[static_cast<size_t>(peer)];
  }
};

}  // namespace myriad
