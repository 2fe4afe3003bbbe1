// One rank's whole benchmark run: communicator, buffers, the sweep over types × ops × sizes, and (rank 0)
// the printed table. Invariant: buffers are allocated once, at the largest size, and touched before the
// first timed call, so page faults are never timed; on device memory the timed loop is timed around the
// stream (its synchronisation ends the clock).
#pragma once

#include <string>
#include <vector>

#include "benchmarks/common/collective.h"
#include "benchmarks/common/device_memory.h"
#include "benchmarks/common/options.h"
#include "benchmarks/common/report.h"
#include "benchmarks/common/timing.h"
#include "myriad/myriad.h"

namespace myriad::bench {

// Opens the memory of options.memory (cuda: device localRank modulo the device count), joins the communicator
// as `rank` of `nranks`, runs the sweep, leaves. Returns the process exit code: 0, or 1 after an error
// (printed, with the rank) or after wrong results.
int runRank(const Collective& coll, const Options& options, const RunDescription& run, int rank, int localRank,
            int nranks, const myrUniqueId& id);
// Paired (-A a,b,...): one communicator per id, the i-th initialised with MYRIAD_ALGO=algos[i], all timed in turn
// at each size by one sweep (its rows name their algorithm).
int runRank(const Collective& coll, const Options& options, const RunDescription& run, int rank, int localRank,
            int nranks, const std::vector<myrUniqueId>& ids, const std::vector<std::string>& algos);

// The sweep of one rank of any library, between its init and its teardown; rank 0 prints. Buffers come from
// `memory` (NULL: host memory, as the peers use). Returns false with *error on a failed call; *wrongTotal
// counts wrong elements over all ranks and rows.
bool runSweep(const Collective& coll, const Options& options, const RunDescription& run, RankOps& ops,
              double* wrongTotal, std::string* error, RankMemory* memory = nullptr);
// The same over several communicators of the same ranks (`algos[i]` names comms[i]'s rows when there are two
// or more): at each size every one in turn, the first rotating, so that what the machine does at that moment
// hits them alike. Cross-rank numbers go over comms[0].
bool runSweep(const Collective& coll, const Options& options, const RunDescription& run,
              const std::vector<RankOps*>& comms, const std::vector<std::string>& algos, double* wrongTotal,
              std::string* error, RankMemory* memory = nullptr);

}  // namespace myriad::bench
