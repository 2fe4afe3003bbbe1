// The MPI bootstrap: one MPI_Bcast of rank 0's unique id, with a flag that says whether rank 0 made one, so a
// failure there ends every rank with its reason instead of leaving them in the broadcast. Only this file sees
// mpi.h; Myriad itself carries all collective traffic, including the benchmark's -a average.
#include "benchmarks/common/mpi_bootstrap.h"

#include <mpi.h>

#include <cstring>

namespace myriad::bench {
namespace {

bool initialised = false;

struct IdMessage {
  int ok = 0;
  char reason[256] = "";
  myrUniqueId id;
};

}  // namespace

bool mpiBootstrapBuilt() {
  return true;
}

bool mpiBootstrapId(const LaunchInfo& info, myrUniqueId* id, std::string* error) {
  if (MPI_Init(nullptr, nullptr) != MPI_SUCCESS) {
    *error = "MPI_Init failed";
    return false;
  }
  initialised = true;
  int rank = -1;
  int size = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (rank != info.rank || size != info.size) {
    *error = "MPI_COMM_WORLD makes this rank " + std::to_string(rank) + " of " + std::to_string(size) + ", but the " +
             info.kind + " launcher says rank " + std::to_string(info.rank) + " of " + std::to_string(info.size) +
             ": the benchmark's MPI is not the launcher's (use that MPI's mpirun, or set MYRIAD_COMM_ID=host:port)";
    mpiBootstrapFinalize();
    return false;
  }
  IdMessage msg;
  if (rank == 0) {
    const myrResult_t res = myrGetUniqueId(&msg.id);
    msg.ok = res == myrSuccess ? 1 : 0;
    if (res != myrSuccess) {
      const std::string why = std::string(myrGetErrorString(res)) + ": " + myrGetLastError(nullptr);
      std::strncpy(msg.reason, why.c_str(), sizeof(msg.reason) - 1);
    }
  }
  if (MPI_Bcast(&msg, sizeof(msg), MPI_BYTE, 0, MPI_COMM_WORLD) != MPI_SUCCESS) {
    *error = "MPI_Bcast of the unique id failed";
    mpiBootstrapFinalize();
    return false;
  }
  if (msg.ok == 0) {
    *error = std::string("rank 0's myrGetUniqueId failed: ") + msg.reason;
    mpiBootstrapFinalize();
    return false;
  }
  *id = msg.id;
  return true;
}

void mpiBootstrapFinalize() {
  if (!initialised) return;
  initialised = false;
  MPI_Finalize();
}

}  // namespace myriad::bench
