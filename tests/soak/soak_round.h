// One round of the soak (scripts/soak): what it draws from its seed (ranks, transport, algorithm, the
// collectives it calls) and the body each forked rank runs. Invariant: every rank draws the same cases in
// the same order from the round's seed, and all of them stop after the same call (they agree by an
// all-reduce of "time is up" after every batch), so a round never mismatches by itself.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "myriad/myriad.h"
#include "tests/common/coll_check.h"

namespace myriad::test {

struct SoakDraw {
  int round = 0;
  uint64_t seed = 0;  // the round's own seed, derived from the run's seed and the round number
  int nranks = 2;
  bool tcp = false;  // MYRIAD_DISABLE_SHM=1: tcp between every pair
  bool cma = false;  // shm with MYRIAD_SHM_MODE=cma
  int nhosts = 1;    // > 1: MYRIAD_HOST_ID splits the ranks into "hosts" (shm inside, tcp between)
  int netPaths = 4;  // MYRIAD_NET_PATHS
  std::string algo;  // MYRIAD_ALGO; "" leaves the choice to the tuner
  std::vector<Coll> colls;
  bool sendRecv = false;  // also grouped send/recv rings
  double seconds = 20;    // how long the ranks keep calling

  std::string transport() const;  // "shm", "shm_cma", "tcp/paths1", "hosts2/paths4"
  std::string describe() const;   // "5 ranks, tcp/paths4, allreduce.tree"
};

uint64_t soakMix(uint64_t x);
SoakDraw drawRound(uint64_t runSeed, int round, double seconds);

// What one rank reports at the end of a round (one line through childReport, parsed by the parent).
struct SoakRankStats {
  uint64_t calls = 0;
  uint64_t bytes = 0;    // payload bytes this rank's calls delivered into its receive buffers
  long rssStartKib = 0;  // after the first 20 % of the round
  long rssEndKib = 0;    // after the last call, before the communicator is destroyed
};
std::string formatStats(const SoakRankStats& s);
bool parseStats(const std::string& report, SoakRankStats* s);

// Resident memory of this process in KiB, after returning freed heap to the system (malloc_trim), so that
// the figure is memory still held rather than what the allocator keeps cached from the largest case.
long residentKib();

// The body of one forked rank: sets the environment of the draw, joins, calls until the round's time is
// up, checks every result and its own RSS growth against rssBoundMib. Returns the exit code.
int soakRank(const SoakDraw& d, int rank, const myrUniqueId& id, double rssBoundMib);

}  // namespace myriad::test
