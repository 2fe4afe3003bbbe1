// The bootstrap at scale (core/bootstrap_allgather.h): what n ranks cost the rendezvous store's root, and
// the exchange of descriptions among the ranks run over the fabric model.
//
// Per rank, as the library does it: one store client (a connection and its hello at the root), a try-get
// and a set of its address ("boot.<rank>"), one wait-all (rendezvous/store.h) of the addresses of the
// ceil(log2 n) ranks it sends to, then for each Bruck round a TCP connection to that rank and the mutual
// hello (base/hello.h: Open 36 B, Answer 56 B, Proof 32 B), and the round itself: min(2^k, n - 2^k) descriptions to
// rank r - 2^k, as many from rank r + 2^k, each round after the one before. The root's part is counted (requests,
// bytes) and priced by its CPU per hello, per request and per key of a wait-all (measured: myriad_bootstrap_bench
// --store-cost); the
// connections and rounds are a plan per rank (one class: every rank's is rank 0's moved) that the virtual
// executor runs over the fabric. The estimate puts the root's work first, whole: every rank starts at once,
// and the last rank's gets are served only when the root has served everyone before it.
//
// A rank kept waiting for its peers' hellos also polls the abort notice ("boot.abort", on the library's
// schedule: abortNoticeWait, at most n / 10,000 s apart, 2 s at least), and those polls are the root's work
// too: with ranks served in turn, their waits spread evenly over the root's time, so the root's time T
// solves T = base + op x (the polls of n ranks whose waits spread over [0, T]) (found by iteration). The wait-all polls
// nothing: the abort notice is its stop key, and the root answers it when the notice is set.
#pragma once

#include <cstdint>

#include "base/status.h"
#include "tools/sim/plan_set.h"

namespace myriad::netsim {

struct BootstrapSpec {
  int nranks = 1;
  double descriptionBytes = 366;  // a rank's description as held and sent (PeerInfo encoded, framed)
  double addressBytes = 23;       // the value of "boot.<rank>": nranks and the listening address
  // Root CPU per store client (its connection and hello) and per request (get, try-get, set), µs: medians of
  // myriad_bootstrap_bench --store-cost on an idle 2-core machine, client and server on separate cores.
  double storeHelloUs = 77;
  double storeOpUs = 24;
  double storeKeyUs = 0.25;  // more per key of a wait-all (1.0 % of a request: 0.45 of 43.8 µs on a slower machine)
};

struct BootstrapModel {
  int rounds = 0;
  uint64_t storeRequests = 0;                    // requests the root serves, hellos and polls not counted
  uint64_t storeWaitKeys = 0;                    // keys named in the wait-alls
  uint64_t abortPolls = 0;                       // reads of the abort notice by waiting ranks
  uint64_t storeBytesIn = 0, storeBytesOut = 0;  // values set into and read from the store
  double rootSeconds = 0;                        // the root's CPU for all of them, polls included
  uint64_t heldPerRank = 0;                      // description bytes each rank ends with
  int connectionsPerRank = 0;                    // the store client and two per round
  PlanSet plans;                                 // every rank's connections and rounds
};

// The model of `spec`; invalid argument for fewer than 1 rank or a negative constant.
Result<BootstrapModel> bootstrapModel(const BootstrapSpec& spec);

}  // namespace myriad::netsim
