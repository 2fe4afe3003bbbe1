// myriad-tune: measures this machine's link classes in seconds and writes them as a MYRIAD_TUNER_FILE.
//   myriad-tune [--out FILE] [--bytes SIZE_MIB]
// For shm and for tcp (MYRIAD_DISABLE_SHM=1) it forks two ranks of one communicator and measures a stream of
// 8-byte messages (o: the time per message, what each costs the sender's and the receiver's CPU), a
// ping-pong of them (half a round trip is α + 2o, so α is what is left) and a stream of SIZE_MIB MiB
// messages (GB/s), and in this process the throughput of a float sum and of a copy. Classes it cannot measure
// here (rdma, nvlink, pcie, host staging) keep their defaults. Without --out it prints the file.
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

#include "myriad/myriad.h"
#include "tuner/tuner_file.h"

namespace {

using Clock = std::chrono::steady_clock;

double secondsSince(Clock::time_point t) {
  return std::chrono::duration<double>(Clock::now() - t).count();
}

constexpr int kPingIters = 400;
constexpr int kStreamIters = 8;

// One rank's part; rank 0 writes "alpha_us overhead_us gbps" to `out`. Returns the exit code.
int rankBody(int rank, const myrUniqueId& id, size_t streamBytes, int out) {
  myrComm_t comm = nullptr;
  if (myrCommInitRank(&comm, 2, id, rank) != myrSuccess) return 3;
  int peer = 1 - rank;
  std::vector<char> small(8), big(streamBytes);
  auto ping = [&](int iters) {
    for (int i = 0; i < iters; ++i) {
      if (rank == 0) {
        if (myrSend(small.data(), small.size(), myrUint8, peer, comm, nullptr) != myrSuccess ||
            myrRecv(small.data(), small.size(), myrUint8, peer, comm, nullptr) != myrSuccess)
          return false;
      } else if (myrRecv(small.data(), small.size(), myrUint8, peer, comm, nullptr) != myrSuccess ||
                 myrSend(small.data(), small.size(), myrUint8, peer, comm, nullptr) != myrSuccess) {
        return false;
      }
    }
    return true;
  };
  if (!ping(20)) return 4;
  auto t0 = Clock::now();
  if (!ping(kPingIters)) return 4;
  double halfRoundTripUs = secondsSince(t0) * 1e6 / (2.0 * kPingIters);
  auto stream = [&](std::vector<char>& buf, int iters) {
    for (int i = 0; i < iters; ++i) {
      myrResult_t r = rank == 0 ? myrSend(buf.data(), buf.size(), myrUint8, peer, comm, nullptr)
                                : myrRecv(buf.data(), buf.size(), myrUint8, peer, comm, nullptr);
      if (r != myrSuccess) return false;
    }
    return ping(1);  // the last byte is in
  };
  if (!stream(small, 20)) return 5;
  t0 = Clock::now();
  if (!stream(small, kPingIters)) return 5;
  double overheadUs = std::max(0.0, (secondsSince(t0) * 1e6 - 2 * halfRoundTripUs) / kPingIters);
  double alphaUs = std::max(0.0, halfRoundTripUs - 2 * overheadUs);
  if (!stream(big, 1)) return 5;
  t0 = Clock::now();
  if (!stream(big, kStreamIters)) return 5;
  double s = secondsSince(t0) - 2 * halfRoundTripUs * 1e-6;
  double gbps = static_cast<double>(streamBytes) * kStreamIters / s / 1e9;
  myrCommDestroy(comm);
  if (rank == 0) {
    char line[64];
    int n = std::snprintf(line, sizeof line, "%.3f %.3f %.4f\n", alphaUs, overheadUs, gbps);
    if (write(out, line, static_cast<size_t>(n)) != n) return 6;
  }
  return 0;
}

// Forks the two ranks with `env` set; false with *error when a rank fails.
bool measureLink(const char* envName, const char* envValue, size_t streamBytes, myriad::LinkCost* cost,
                 std::string* error) {
  myrUniqueId id;
  if (myrGetUniqueId(&id) != myrSuccess) return *error = "myrGetUniqueId failed", false;
  int fds[2];
  if (pipe(fds) != 0) return *error = "pipe failed", false;
  pid_t pids[2];
  for (int r = 0; r < 2; ++r) {
    pids[r] = fork();
    if (pids[r] == 0) {
      close(fds[0]);
      if (envName) setenv(envName, envValue, 1);
      _exit(rankBody(r, id, streamBytes, fds[1]));
    }
  }
  close(fds[1]);
  char buf[128] = {};
  ssize_t got = read(fds[0], buf, sizeof buf - 1);
  close(fds[0]);
  bool ok = true;
  for (pid_t p : pids) {
    int status = 0;
    waitpid(p, &status, 0);
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
      ok = false;
      *error = "a rank failed (exit status " + std::to_string(WIFEXITED(status) ? WEXITSTATUS(status) : -1) +
               "; run with MYRIAD_DEBUG=INFO to see why)";
    }
  }
  if (!ok) return false;
  if (got <= 0 || std::sscanf(buf, "%lf %lf %lf", &cost->alphaUs, &cost->overheadUs, &cost->gbps) != 3)
    return *error = "rank 0 reported nothing", false;
  return true;
}

// GB/s of `fn` over `bytes`, best of 5.
template <typename Fn>
double throughput(size_t bytes, Fn fn) {
  double best = 1e30;
  for (int i = 0; i < 5; ++i) {
    auto t0 = Clock::now();
    fn();
    best = std::min(best, secondsSince(t0));
  }
  return static_cast<double>(bytes) / best / 1e9;
}

}  // namespace

int main(int argc, char** argv) {
  std::string outPath;
  size_t streamMiB = 4;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--out" && i + 1 < argc) {
      outPath = argv[++i];
    } else if (a == "--bytes" && i + 1 < argc) {
      streamMiB = static_cast<size_t>(std::atol(argv[++i]));
      if (streamMiB < 1 || streamMiB > 1024) return std::fprintf(stderr, "myriad-tune: --bytes: 1..1024 MiB\n"), 2;
    } else {
      std::fprintf(stderr, "usage: myriad-tune [--out FILE] [--bytes SIZE_MIB]\n");
      return 2;
    }
  }
  myriad::TunerConstants k = myriad::TunerConstants::defaults();
  std::string error;
  if (!measureLink(nullptr, nullptr, streamMiB << 20, &k.link(myriad::LinkClass::kShm), &error)) {
    std::fprintf(stderr, "myriad-tune: shm: %s\n", error.c_str());
    return 1;
  }
  if (!measureLink("MYRIAD_DISABLE_SHM", "1", streamMiB << 20, &k.link(myriad::LinkClass::kTcp), &error)) {
    std::fprintf(stderr, "myriad-tune: tcp: %s\n", error.c_str());
    return 1;
  }
  const size_t n = size_t{4} << 20;  // floats
  std::vector<float> a(n, 1.0f), b(n, 2.0f), c(n);
  k.reduceGbps = throughput(n * sizeof(float), [&] {
    for (size_t i = 0; i < n; ++i) a[i] += b[i];
  });
  k.copyGbps = throughput(n * sizeof(float), [&] { std::memcpy(c.data(), b.data(), n * sizeof(float)); });
  if (a[n / 2] < 0) return 1;  // keep the loop
  std::string text = myriad::writeTunerFile(k);
  if (outPath.empty()) {
    std::fputs(text.c_str(), stdout);
    return 0;
  }
  std::ofstream f(outPath);
  f << text;
  if (!f) return std::fprintf(stderr, "myriad-tune: cannot write %s\n", outPath.c_str()), 1;
  for (myriad::LinkClass c : {myriad::LinkClass::kShm, myriad::LinkClass::kTcp}) {
    const myriad::LinkCost& l = k.link(c);
    std::printf("myriad-tune: %s: latency %.1f us, overhead %.1f us per message, %.2f GB/s\n", myriad::linkClassName(c),
                l.alphaUs, l.overheadUs, l.gbps);
  }
  std::printf("myriad-tune: wrote %s\n", outPath.c_str());
  return 0;
}
