// The bootstrap at scale (core/bootstrap_allgather.h): what n ranks cost the rendezvous store's root, and
// the exchange of descriptions among the ranks run over the fabric model.
//
// Per rank, as the library does it: one store client (a connection and its hello at the root), a try-get
// and a set of its address ("boot.<rank>"), then for each of the ceil(log2 n) Bruck rounds a get of the
// address of the rank it sends to, a TCP connection to it and the mutual hello (base/hello.h: Open 36 B,
// Answer 56 B, Proof 32 B), and the round itself: min(2^k, n - 2^k) descriptions to rank r - 2^k, as many
// from rank r + 2^k, each round after the one before. The root's part is counted (requests, bytes) and
// priced by its CPU per hello and per request (measured: myriad_bootstrap_bench --store-cost); the
// connections and rounds are a plan per rank (one class: every rank's is rank 0's moved) that the virtual
// executor runs over the fabric. The estimate puts the root's work first, whole: every rank starts at once,
// and the last rank's gets are served only when the root has served everyone before it.
//
// A rank kept waiting also polls the abort notice ("boot.abort", on the library's schedule:
// abortNoticeWait, at most n / 10,000 s apart, 2 s at least), and those polls are the root's work too:
// with ranks served in turn, each waits about half the root's time, so the root's time T solves
// T = base + n polls(T / 2) op (found by iteration). A get that times out (a rank waits for an address in
// gets of 1 s, reading the abort notice between them) costs the root nothing more: the client keeps the
// parked get and resumes it (rendezvous/tcp_store.h), and the polls go on a second connection.
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
};

struct BootstrapModel {
  int rounds = 0;
  uint64_t storeRequests = 0;                    // requests the root serves, hellos and polls not counted
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
