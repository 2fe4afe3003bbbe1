// The unique id of a run started by mpirun, passed with MPI (builds with MYRIAD_WITH_MPI): rank 0 makes it and
// broadcasts it, as nccl-tests do. Invariant: MPI is initialised by mpiBootstrapId and finalised by
// mpiBootstrapFinalize only; the library never calls MPI, and nothing but this bootstrap does.
#pragma once

#include <string>

#include "benchmarks/common/launcher.h"
#include "myriad/myriad.h"

namespace myriad::bench {

// Whether this build has the MPI bootstrap (mpi_bootstrap.cc rather than mpi_bootstrap_none.cc).
bool mpiBootstrapBuilt();

// MPI_Init; rank 0 calls myrGetUniqueId and MPI_Bcasts the id (or its failure) to every rank. Returns false
// with *error when MPI's world disagrees with the launcher's rank and size (an MPI that is not the launcher's),
// or when rank 0 could not make the id; MPI is then finalised already.
bool mpiBootstrapId(const LaunchInfo& info, myrUniqueId* id, std::string* error);

// MPI_Finalize, once every rank is done with Myriad; nothing when mpiBootstrapId did not initialise MPI.
void mpiBootstrapFinalize();

}  // namespace myriad::bench
