// The launcher-mode unique id and local fork mode. The parent flushes stdio before fork (or children would print
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

#include "benchmarks/common/slurm_env.h"

namespace myriad::bench {
namespace {

bool hasEnv(const char* name) {
  const char* text = std::getenv(name);
  return text != nullptr && *text != '\0';
}

}  // namespace

bool detectLaunch(LaunchInfo* info, std::string* error) {
  char kind[32] = "";
  const myrResult_t res = myrLaunchInfo(&info->rank, &info->size, &info->localRank, kind, sizeof(kind));
  if (res != myrSuccess) {
    *error = std::string(myrGetErrorString(res)) + ": " + myrGetLastError(nullptr);
    return false;
  }
  info->kind = kind;
  return true;
}

bool myriad_bench_id_from_env(const LaunchInfo& info, myrUniqueId* id, std::string* error) {
  const std::string who =
      info.kind + " launcher detected (rank " + std::to_string(info.rank) + " of " + std::to_string(info.size) + ")";
  if (!hasEnv("MYRIAD_COMM_ID") && hasEnv("MASTER_ADDR") && hasEnv("MASTER_PORT")) {
    std::string host = std::getenv("MASTER_ADDR");
    if (host.find(':') != std::string::npos && host.front() != '[') host = "[" + host + "]";  // IPv6 literal
    setenv("MYRIAD_COMM_ID", (host + ":" + std::getenv("MASTER_PORT")).c_str(), 1);
  }
  const bool srunStep = info.kind == "slurm" || (info.kind == "pmi" && hasEnv("SLURM_STEP_ID"));
  if (!hasEnv("MYRIAD_COMM_ID") && srunStep) {
    std::string commId;
    std::string why;
    if (!slurmCommId(&commId, &why)) {
      *error = who + ", MYRIAD_COMM_ID is not set and the srun step's rendezvous cannot be derived: " + why;
      return false;
    }
    setenv("MYRIAD_COMM_ID", commId.c_str(), 1);
  }
  if (!hasEnv("MYRIAD_COMM_ID")) {
    *error = who +
             ", but the ranks have no common rendezvous: set MYRIAD_COMM_ID=host:port (an address every "
             "rank can reach; rank 0 listens there), or MASTER_ADDR and MASTER_PORT, or run locally with -np N";
    return false;
  }
  const myrResult_t res = myrGetUniqueId(id);
  if (res != myrSuccess) {
    *error = who + ": myrGetUniqueId with MYRIAD_COMM_ID=" + std::getenv("MYRIAD_COMM_ID") +
             " failed: " + myrGetErrorString(res) + ": " + myrGetLastError(nullptr);
    return false;
  }
  return true;
}

int runForkedRanks(int nranks, const RankBody& body, const char* program, int graceSeconds) {
  using Clock = std::chrono::steady_clock;
  std::vector<pid_t> pids(static_cast<size_t>(nranks), -1);
  std::fflush(nullptr);
  const pid_t parent = getpid();
  for (int r = 0; r < nranks; ++r) {
    const pid_t pid = fork();
    if (pid == 0) {
      prctl(PR_SET_PDEATHSIG, SIGKILL);
      if (getppid() != parent) _exit(1);
      const int code = body(r, nranks);
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
