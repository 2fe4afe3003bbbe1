// The MPI bootstrap of a build without MPI (MYRIAD_WITH_MPI=OFF): runs under mpirun then meet at
// MYRIAD_COMM_ID (launcher.h), so these are never asked for an id.
#include "benchmarks/common/mpi_bootstrap.h"

namespace myriad::bench {

bool mpiBootstrapBuilt() {
  return false;
}

bool mpiBootstrapId(const LaunchInfo&, myrUniqueId*, std::string* error) {
  *error = "this build has no MPI bootstrap (configured with MYRIAD_WITH_MPI=OFF or without MPI)";
  return false;
}

void mpiBootstrapFinalize() {}

}  // namespace myriad::bench
