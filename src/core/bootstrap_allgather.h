// bootstrapAllGather: every rank's description (a few hundred bytes) to every rank at init, moved by the
// ranks themselves, so that the rendezvous store carries only each rank's address: O(n) small keys through
// the store's host (and O(log n) reads per rank) instead of the O(n²) bytes of everyone downloading one table
// from it (64 GB at 16,384 ranks).
//
// The algorithm is Bruck's all-gather: ceil(log2 n) rounds; in round k (d = 2^k) rank r sends the
// min(d, n - d) descriptions it holds from r on to rank r - d and takes as many from rank r + d, so that
// after the last round it holds all n. Each rank listens, publishes "boot.<rank>" (its nranks and address),
// reads the addresses of the ranks it sends to, connects to them and accepts the ranks that send to it (one
// connection per round, opened with the mutual hello of base/hello.h keyed by the secret and the
// communicator's tag; other connections are refused with a WARN). Per rank: O(log n) connections and steps,
// O(n) bytes held.
//
// Failures: a rank that fails (a peer gone, a wrong nranks, the deadline, an abort) publishes "boot.abort"
// with its code and reason and, where a connection is between frames, sends it on; every other rank
// fails with that reason (the wait for addresses ends when it is set; later it is read with a back-off up to
// 2 s, or n x 0.1 ms at scale, and at once when a peer is gone), so none hangs. A late rank is waited for, up to the
// deadline.
#pragma once

#include <atomic>
#include <chrono>
#include <string>
#include <vector>

#include "base/auth.h"
#include "base/status.h"
#include "base/wire.h"
#include "rendezvous/store.h"

namespace myriad {

struct BootstrapExchange {
  Store* store = nullptr;
  int rank = 0, nranks = 1;
  auth::Key key{};        // the hello's key (derive it from the communicator's secret and tag)
  std::string ifname;     // MYRIAD_SOCKET_IFNAME: where to listen ("": the default interface)
  int timeoutMs = 60000;  // the whole exchange, late ranks included
  const std::atomic<bool>* cancel = nullptr;
};

// Returns every rank's `mine`, by rank. Each description is less than 64 KiB.
Result<std::vector<Bytes>> bootstrapAllGather(const BootstrapExchange& x, const Bytes& mine);

// How often a rank kept waiting reads the abort notice from the store: 0.1 s in, then twice as far on each
// time, up to a cap of 2 s, and never closer than n x 0.1 ms apart. Every read is a request at the root, so
// that floor holds the root to 10,000 such reads a second however many ranks wait (about a quarter of its
// CPU at 24 µs a request): at 131,072 ranks, reads 2 s apart would be 65,536 a second and the first five of
// the back-off (0.1 to 3.1 s in) over 200,000, more than the root can serve, and init would stall on its
// own polling (myriad-sim --bootstrap models it). `k`: the read's index (0 for the first); returns the wait
// before it, from the previous read (from the start for the first).
std::chrono::milliseconds abortNoticeWait(int nranks, int k);

}  // namespace myriad
