// How the processes of a benchmark run come to be ranks: started by a launcher (Open MPI, PMI/Slurm,
// torchrun), read from its environment, or forked locally by -np N. Invariant: in fork mode the parent holds
// the unique id (its rendezvous listener) and stays alive, only waiting, until every child has ended.
#pragma once

#include <functional>
#include <string>

#include "myriad/myriad.h"

namespace myriad::bench {

struct LaunchInfo {
  std::string launcher = "none";  // "openmpi", "pmi", "slurm", "torchrun", or "none"
  int rank = 0;
  int size = 1;
  int localRank = 0;
};

// Reads the launcher's variables, in the order Open MPI, PMI, Slurm, torchrun. Returns false with *error
// when a launcher's variables are present but malformed; no launcher at all is not an error.
bool detectLauncher(LaunchInfo* info, std::string* error);

// The unique id of a launcher-started run, from MYRIAD_COMM_ID or torchrun's MASTER_ADDR/MASTER_PORT.
// TODO: build the id (every rank derives the same id from the rendezvous address, or rank 0 publishes it
// over MPI); until then this fails with a clear message.
bool myriad_bench_id_from_env(const LaunchInfo& info, myrUniqueId* id, std::string* error);

// body(rank, nranks, id) returns a process exit code.
using RankBody = std::function<int(int rank, int nranks, const myrUniqueId& id)>;

// Forks nranks children running body, waits for all of them and returns 0 when every child exited with 0.
// Each failure is printed (rank, pid, exit code or signal). Once a child has failed, the others get
// graceSeconds to notice and leave on their own; whoever is still running then is killed.
int runForkedRanks(int nranks, const myrUniqueId& id, const RankBody& body, const char* program, int graceSeconds = 30);

}  // namespace myriad::bench
