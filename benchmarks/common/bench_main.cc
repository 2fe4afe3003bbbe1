// benchMain. Order matters: MYRIAD_ALGO is exported before myrGetUniqueId and before any fork, so every
// rank (and the rendezvous host) sees it; stdio is flushed by runForkedRanks before children exist.
#include "benchmarks/common/bench_main.h"

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "benchmarks/common/bench_runner.h"
#include "benchmarks/common/launcher.h"
#include "benchmarks/common/options.h"
#include "benchmarks/common/report.h"

namespace myriad::bench {
namespace {

std::string baseName(const char* path) {
  const char* slash = std::strrchr(path, '/');
  return slash != nullptr ? slash + 1 : path;
}

// Fails early, before any rank exists, when the --json file cannot be written.
bool jsonWritable(const std::string& path, const std::string& program) {
  if (path.empty()) return true;
  std::FILE* f = std::fopen(path.c_str(), "a");
  if (f != nullptr) {
    std::fclose(f);
    return true;
  }
  std::fprintf(stderr, "%s: cannot write --json %s: %s\n", program.c_str(), path.c_str(), std::strerror(errno));
  return false;
}

}  // namespace

bool prepareRun(int argc, char** argv, const PeerFlags* peer, Options* o, RunDescription* run, int* exitCode) {
  Options& options = *o;
  if (!parseOptions(argc, argv, &options, exitCode, peer)) return false;
  run->program = baseName(argc > 0 ? argv[0] : "perf");
  const char* program = run->program.c_str();
  *exitCode = 2;  // for each failure below; unread after a success
  if (options.memory == "cuda") {
    std::fprintf(stderr,
                 "%s: -m cuda: CUDA memory is not supported by this build of the benchmarks; "
                 "only host memory (-m host) is\n",
                 program);
    return false;
  }
  if (options.memory != "host") {
    std::fprintf(stderr, "%s: -m %s: unknown memory kind (host, or cuda in CUDA builds)\n", program,
                 options.memory.c_str());
    return false;
  }
  return jsonWritable(options.jsonPath, run->program);
}

int benchMain(int argc, char** argv, const Collective& coll) {
  Options options;
  RunDescription run;
  int exitCode = 0;
  if (!prepareRun(argc, argv, nullptr, &options, &run, &exitCode)) return exitCode;
  run.collective = coll.name;
  const char* program = run.program.c_str();
  if (!options.algo.empty()) setenv("MYRIAD_ALGO", options.algo.c_str(), 1);
  const char* algo = std::getenv("MYRIAD_ALGO");
  run.algo = algo != nullptr ? algo : "";
  int version = 0;
  if (myrGetVersion(&version) != myrSuccess) version = 0;
  run.title = "Myriad " + std::to_string(version / 10000) + "." + std::to_string(version / 100 % 100) + "." +
              std::to_string(version % 100);

  LaunchInfo launch;
  std::string error;
  if (!detectLaunch(&launch, &error)) {
    std::fprintf(stderr, "%s: %s\n", program, error.c_str());
    return 2;
  }
  if (launch.size > 1) {
    if (options.nranks > 0) {
      std::fprintf(stderr,
                   "%s: -np %d given, but the process was started by %s as rank %d of %d; "
                   "use one or the other\n",
                   program, options.nranks, launch.kind.c_str(), launch.rank, launch.size);
      return 2;
    }
    myrUniqueId id;
    if (!myriad_bench_id_from_env(launch, &id, &error)) {
      std::fprintf(stderr, "%s: rank %d: %s\n", program, launch.rank, error.c_str());
      return 1;
    }
    run.launcher = launch.kind;
    run.nranks = launch.size;
    return runRank(coll, options, run, launch.rank, launch.size, id);
  }

  const int nranks = options.nranks > 0 ? options.nranks : 1;
  run.launcher = nranks > 1 ? "fork" : "none";
  run.nranks = nranks;
  myrUniqueId id;
  const myrResult_t res = myrGetUniqueId(&id);
  if (res != myrSuccess) {
    std::fprintf(stderr, "%s: myrGetUniqueId failed: %s\n", program, myrGetErrorString(res));
    return 1;
  }
  if (nranks == 1) return runRank(coll, options, run, 0, 1, id);
  auto body = [&](int rank, int n) {
    if (options.hosts > 1) {  // in the child, before init: ranks [h*n/H, (h+1)*n/H) form host h
      std::string host = run.program + "-host" + std::to_string(static_cast<long>(rank) * options.hosts / n);
      setenv("MYRIAD_HOST_ID", host.c_str(), 1);
    }
    return runRank(coll, options, run, rank, n, id);
  };
  return runForkedRanks(nranks, body, program);
}

}  // namespace myriad::bench
