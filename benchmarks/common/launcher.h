// How the processes of a benchmark run come to be ranks: started by a launcher (Open MPI, PMI/Slurm,
// torchrun) and meeting at MYRIAD_COMM_ID, or forked locally by -np N. Invariant: in fork mode the parent holds
// the unique id (its rendezvous listener) and stays alive, only waiting, until every child has ended.
#pragma once

#include <functional>
#include <string>

#include "myriad/myriad.h"

namespace myriad::bench {

// Which launcher started this process, as myrLaunchInfo reports it.
struct LaunchInfo {
  std::string kind = "none";  // "ompi", "pmi", "slurm", "torchrun" or "none"
  int rank = 0;
  int size = 1;
  int localRank = 0;  // among the launcher's processes on this host (0 when it does not say)
};

// myrLaunchInfo; false with *error (naming the malformed variable) when it fails.
bool detectLaunch(LaunchInfo* info, std::string* error);

// The unique id of a run whose launcher (found by detectLaunch) cannot pass one: every rank derives
// the same one from MYRIAD_COMM_ID=host:port, which is set, when it is not set, from torchrun's
// MASTER_ADDR:MASTER_PORT, or under srun from the step's first node and a port of its job and step ids
// (slurm_env.h); rank 0 listens there at init. Returns false with *error when none applies or the id cannot
// be made.
bool myriad_bench_id_from_env(const LaunchInfo& info, myrUniqueId* id, std::string* error);

// body(rank, nranks) returns a process exit code.
using RankBody = std::function<int(int rank, int nranks)>;

// Forks nranks children running body, waits for all of them and returns 0 when every child exited with 0.
// Each failure is printed (rank, pid, exit code or signal). Once a child has failed, the others get
// graceSeconds to notice and leave on their own; whoever is still running then is killed.
int runForkedRanks(int nranks, const RankBody& body, const char* program, int graceSeconds = 30);

}  // namespace myriad::bench
