// Launcher detection and local fork mode. The parent flushes stdio before fork (or children would print
// its buffered text again) and children ask for SIGKILL when the parent dies, so no rank outlives a killed run.
#include "benchmarks/common/launcher.h"

#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <thread>
#include <vector>

namespace myriad::bench {
namespace {

struct EnvNames {
  const char* launcher;
  const char* rank;
  const char* size;
  const char* localRank;  // may be absent from the environment
};

constexpr EnvNames kLaunchers[] = {
    {"openmpi", "OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE", "OMPI_COMM_WORLD_LOCAL_RANK"},
    {"pmi", "PMI_RANK", "PMI_SIZE", "MPI_LOCALRANKID"},
    {"slurm", "SLURM_PROCID", "SLURM_NTASKS", "SLURM_LOCALID"},
    {"torchrun", "RANK", "WORLD_SIZE", "LOCAL_RANK"},
};

bool readInt(const char* name, int* value) {
  const char* text = std::getenv(name);
  if (text == nullptr || *text == '\0') return false;
  char* end = nullptr;
  errno = 0;
  const long v = std::strtol(text, &end, 10);
  if (errno != 0 || *end != '\0' || v < 0 || v > 1 << 30) return false;
  *value = static_cast<int>(v);
  return true;
}

bool hasEnv(const char* name) {
  const char* text = std::getenv(name);
  return text != nullptr && *text != '\0';
}

}  // namespace

bool detectLauncher(LaunchInfo* info, std::string* error) {
  for (const EnvNames& l : kLaunchers) {
    if (!hasEnv(l.rank) && !hasEnv(l.size)) continue;
    LaunchInfo found;
    found.launcher = l.launcher;
    if (!readInt(l.rank, &found.rank) || !readInt(l.size, &found.size) || found.size < 1 || found.rank >= found.size) {
      *error = std::string(l.launcher) + " launcher detected, but " + l.rank + "='" +
               (hasEnv(l.rank) ? std::getenv(l.rank) : "") + "' and " + l.size + "='" +
               (hasEnv(l.size) ? std::getenv(l.size) : "") + "' are not a rank below a positive size";
      return false;
    }
    if (!readInt(l.localRank, &found.localRank)) found.localRank = 0;
    *info = found;
    return true;
  }
  *info = LaunchInfo{};
  return true;
}

bool myriad_bench_id_from_env(const LaunchInfo& info, myrUniqueId* id, std::string* error) {
  (void)id;
  const bool torchrunAddress = info.launcher == "torchrun" && hasEnv("MASTER_ADDR") && hasEnv("MASTER_PORT");
  if (!hasEnv("MYRIAD_COMM_ID") && !torchrunAddress) {
    *error = info.launcher + " launcher detected (rank " + std::to_string(info.rank) + " of " +
             std::to_string(info.size) + "), but the ranks have no common rendezvous: set MYRIAD_COMM_ID=host:port" +
             (info.launcher == "torchrun" ? " (or MASTER_ADDR and MASTER_PORT)" : "") +
             ", or run locally with -np N instead of a launcher";
    return false;
  }
  // TODO(launcher): derive the id from MYRIAD_COMM_ID / MASTER_ADDR:MASTER_PORT, or broadcast rank 0's
  // myrGetUniqueId over MPI when the benchmarks are built with MPI.
  *error = "launcher mode needs MPI support (not built); run locally with -np N";
  return false;
}

int runForkedRanks(int nranks, const myrUniqueId& id, const RankBody& body, const char* program, int graceSeconds) {
  using Clock = std::chrono::steady_clock;
  std::vector<pid_t> pids(static_cast<size_t>(nranks), -1);
  std::fflush(nullptr);
  const pid_t parent = getpid();
  for (int r = 0; r < nranks; ++r) {
    const pid_t pid = fork();
    if (pid == 0) {
      prctl(PR_SET_PDEATHSIG, SIGKILL);
      if (getppid() != parent) _exit(1);
      const int code = body(r, nranks, id);
      std::fflush(nullptr);
      _exit(code >= 0 && code <= 255 ? code : 1);
    }
    if (pid < 0) {
      std::fprintf(stderr, "%s: fork of rank %d failed: %s\n", program, r, std::strerror(errno));
      for (pid_t p : pids) {
        if (p > 0) kill(p, SIGKILL);
      }
      nranks = r;  // reap the ones that were started
      break;
    }
    pids[static_cast<size_t>(r)] = pid;
  }

  int failures = pids.size() == static_cast<size_t>(nranks) ? 0 : 1;
  int running = nranks;
  int firstFailed = -1;
  Clock::time_point giveUpAt = Clock::time_point::max();
  while (running > 0) {
    int status = 0;
    const pid_t pid = waitpid(-1, &status, WNOHANG);
    if (pid < 0 && errno != EINTR) break;
    if (pid <= 0) {
      if (Clock::now() >= giveUpAt) {
        for (int r = 0; r < nranks; ++r) {
          if (pids[static_cast<size_t>(r)] <= 0) continue;
          std::fprintf(stderr, "%s: rank %d (pid %d) still running %d s after rank %d failed; killing it\n", program, r,
                       static_cast<int>(pids[static_cast<size_t>(r)]), graceSeconds, firstFailed);
          kill(pids[static_cast<size_t>(r)], SIGKILL);
        }
        giveUpAt = Clock::time_point::max();
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
      continue;
    }
    int rank = -1;
    for (int r = 0; r < nranks; ++r) {
      if (pids[static_cast<size_t>(r)] == pid) rank = r;
    }
    if (rank < 0) continue;  // not ours
    pids[static_cast<size_t>(rank)] = -1;
    --running;
    if (WIFEXITED(status) && WEXITSTATUS(status) == 0) continue;
    ++failures;
    if (WIFEXITED(status)) {
      std::fprintf(stderr, "%s: rank %d (pid %d) exited with status %d\n", program, rank, static_cast<int>(pid),
                   WEXITSTATUS(status));
    } else if (WIFSIGNALED(status)) {
      std::fprintf(stderr, "%s: rank %d (pid %d) was killed by signal %d (%s)\n", program, rank, static_cast<int>(pid),
                   WTERMSIG(status), strsignal(WTERMSIG(status)));
    }
    if (firstFailed < 0) {
      firstFailed = rank;
      giveUpAt = Clock::now() + std::chrono::seconds(graceSeconds);
    }
  }
  return failures == 0 ? 0 : 1;
}

}  // namespace myriad::bench
