// net_allreduce_loop: one rank of the net tier's failure scenarios (tests/net/net_test.sh cutoff, stuck).
// Joins the communicator from the launcher's variables (RANK, WORLD_SIZE and MYRIAD_COMM_ID, as run_ranks
// sets them), then runs all-reduces until one fails or `seconds` pass. It prints "ready" with the wall
// clock once the first all-reduce is done, and on an error one line
//   error <CLOCK_REALTIME seconds> rank <r> call <n> <result name>: <myrGetLastError text>
// whose time compares with `date +%s.%N` taken by the script. Exit status: 0 when the time ran out without
// an error, 3 on a collective's error, 1 when it could not start. Public API only.
//   net_allreduce_loop [COUNT [SECONDS]]   (float32 elements per all-reduce, default 65536; default 60 s)
#include <myriad/myriad.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <thread>
#include <vector>

namespace {

double realtimeNow() {
  timespec ts{};
  clock_gettime(CLOCK_REALTIME, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

}  // namespace

int main(int argc, char** argv) {
  const size_t count = argc > 1 ? std::strtoull(argv[1], nullptr, 10) : 65536;
  const double seconds = argc > 2 ? std::strtod(argv[2], nullptr) : 60.0;
  const double linger = argc > 3 ? std::strtod(argv[3], nullptr) : 0.0;
  int rank = 0, nranks = 1;
  myrResult_t res = myrLaunchInfo(&rank, &nranks, nullptr, nullptr, 0);
  if (res != myrSuccess) {
    std::fprintf(stderr, "net_allreduce_loop: myrLaunchInfo: %s: %s\n", myrGetErrorString(res),
                 myrGetLastError(nullptr));
    return 1;
  }
  myrUniqueId id;
  res = myrGetUniqueId(&id);
  if (res != myrSuccess) {
    std::fprintf(stderr, "net_allreduce_loop: myrGetUniqueId: %s: %s\n", myrGetErrorString(res),
                 myrGetLastError(nullptr));
    return 1;
  }
  myrComm_t comm = nullptr;
  res = myrCommInitRank(&comm, nranks, id, rank);
  if (res != myrSuccess) {
    std::fprintf(stderr, "net_allreduce_loop: rank %d: myrCommInitRank: %s: %s\n", rank, myrGetErrorString(res),
                 myrGetLastError(nullptr));
    return 1;
  }
  std::vector<float> send(count, static_cast<float>(rank + 1)), recv(count);
  const float want = static_cast<float>(nranks) * static_cast<float>(nranks + 1) / 2.0f;
  const auto start = std::chrono::steady_clock::now();
  long long calls = 0;
  int status = 0;
  while (std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() < seconds) {
    res = myrAllReduce(send.data(), recv.data(), count, myrFloat32, myrSum, comm, nullptr);
    ++calls;
    if (res != myrSuccess) {
      const double t = realtimeNow();
      std::printf("error %.6f rank %d call %lld %s: %s\n", t, rank, calls, myrGetErrorString(res),
                  myrGetLastError(comm));
      std::fflush(stdout);
      status = 3;
      break;
    }
    if (recv[0] != want || recv[count - 1] != want) {
      std::printf("wrong %.6f rank %d call %lld: %g, want %g\n", realtimeNow(), rank, calls, recv[0], want);
      std::fflush(stdout);
      status = 4;
      break;
    }
    if (calls == 1) {
      std::printf("ready %.6f rank %d\n", realtimeNow(), rank);
      std::fflush(stdout);
    }
  }
  if (status == 0) std::printf("done %.6f rank %d calls %lld\n", realtimeNow(), rank, calls);
  if (status != 0 && linger > 0) std::this_thread::sleep_for(std::chrono::duration<double>(linger));
  // A failed communicator is aborted (its peers may be unreachable); a healthy one destroyed.
  if (status != 0)
    myrCommAbort(comm);
  else
    myrCommDestroy(comm);
  std::printf("exit %.6f rank %d\n", realtimeNow(), rank);
  return status;
}
