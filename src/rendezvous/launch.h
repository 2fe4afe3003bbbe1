// Which launcher started this process, and as which rank: Open MPI, PMI (MPICH, Intel MPI, srun --mpi),
// Slurm, or torchrun. The launchers' own variables (OMPI_COMM_WORLD_*, PMI_*, SLURM_*, RANK, ...) are read
// here and nowhere else; they are not MYRIAD_ variables, so they are not in the config table. The C API offers
// this as myrLaunchInfo (src/capi/launch_api.cc), which the benchmarks use.
#pragma once

#include <string>

#include "base/status.h"

namespace myriad {

struct LaunchInfo {
  std::string kind = "none";  // "ompi", "pmi", "slurm", "torchrun" or "none"
  int rank = 0;
  int size = 1;
  int localRank = 0;  // 0 when the launcher does not say
};

// The first launcher whose rank or size variable is set, in the order Open MPI, PMI, Slurm, torchrun;
// "none" (rank 0 of 1) when there is none. A set but malformed value (not a number, rank not below size,
// one of rank and size missing) is an InvalidArgument naming the variable.
Result<LaunchInfo> detectLauncher();

}  // namespace myriad
