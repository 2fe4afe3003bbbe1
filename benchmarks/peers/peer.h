// What the peer programs (mpi_coll_perf, gloo_coll_perf) share on top of the Myriad driver: the -c names of
// a peer's calls and the Myriad table each is measured with, the option checks, and the sweep of one rank.
// Invariant: a peer row and a myriad_*_perf row of the same collective and size moved the same bytes.
#pragma once

#include <string>
#include <vector>

#include "benchmarks/common/bench_runner.h"
#include "benchmarks/common/collective.h"
#include "benchmarks/common/options.h"
#include "benchmarks/common/report.h"

namespace myriad::bench {

// One -c NAME of a peer: the table that sizes, fills, checks and scores it, and the peer's algorithm ("" for
// the library's choice), written in the header and the JSON "algo" field.
struct PeerCall {
  const char* flag;  // "allreduce_ring"
  const Collective* table;
  const char* algo;  // "ring"
};

// The -c names of `calls`, for PeerFlags::collectives.
std::vector<std::string> peerCallNames(const std::vector<PeerCall>& calls);
// The entry of options.collective (parseOptions made sure there is one).
const PeerCall& chosenCall(const std::vector<PeerCall>& calls, const Options& options);

// Rejects what a peer cannot run: -A, --hosts, a -d outside `types`, -o avg (no library has it). Peers
// always block, so this also sets options->blocking. Returns false with the message printed.
bool checkPeerOptions(const char* program, const std::vector<myrDataType_t>& types, Options* options);

// runSweep on this rank; returns the exit code: 1 after wrong results, or after an error (printed with the
// rank; *failed is then true, and peers may still be waiting in a call).
int runPeerRank(const Collective& coll, const Options& options, const RunDescription& run, RankOps& ops, bool* failed);

}  // namespace myriad::bench
