// ringAllGather: every rank's description (a few hundred bytes) to every rank, moved by the ranks themselves
// around a ring of TCP connections, so that the rendezvous store carries only each rank's ring address: O(n)
// small keys through the store's host instead of the O(n²) bytes of everyone downloading one table from it
// (64 GB at 16,384 ranks). Each rank listens, publishes "ring.<rank>" (its nranks and address), reads its
// successor's, connects to it and accepts its predecessor (both with the mutual hello of base/hello.h, keyed
// by the secret and the communicator's tag); then n-1 steps, each passing one description on and taking one
// in. A rank that fails (a dead neighbour, a wrong nranks, the deadline, an abort) tells its successor in an
// abort frame, which goes on around the ring, and publishes "ring.abort" for the ranks still waiting on the
// store: every rank fails naming the first cause, none hangs. A late rank is waited for, up to the deadline.
#pragma once

#include <atomic>
#include <string>
#include <vector>

#include "base/auth.h"
#include "base/status.h"
#include "base/wire.h"
#include "rendezvous/store.h"

namespace myriad {

struct RingExchange {
  Store* store = nullptr;
  int rank = 0, nranks = 1;
  auth::Key key{};        // the hello's key (derive it from the communicator's secret and tag)
  std::string ifname;     // MYRIAD_SOCKET_IFNAME: where to listen ("" : the default interface)
  int timeoutMs = 60000;  // the whole exchange, late ranks included
  const std::atomic<bool>* cancel = nullptr;
};

// Returns every rank's `mine`, by rank. Each description is at most 64 KiB.
Result<std::vector<Bytes>> ringAllGather(const RingExchange& x, const Bytes& mine);

}  // namespace myriad
