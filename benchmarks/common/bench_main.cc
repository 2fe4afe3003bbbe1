// benchMain. Order matters: MYRIAD_ALGO is exported before myrGetUniqueId and before any fork, so every
// rank (and the rendezvous host) sees it (paired, -A a,b: each rank sets it before each of its inits); stdio is flushed
// by runForkedRanks before children exist; the parent of forked ranks never initialises CUDA itself (the memory kind is
// decided from a child's answer).
#include "benchmarks/common/bench_main.h"

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "benchmarks/common/bench_runner.h"
#include "benchmarks/common/device_memory.h"
#include "benchmarks/common/launcher.h"
#include "benchmarks/common/mpi_bootstrap.h"
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

// -m: cuda asked for where there is none is a skip (77) with the reason; not given, cuda when the library
// would run on a GPU (built with CUDA, MYRIAD_DEVICE auto or cuda, a device present), else host. `forks`: this
// process will fork the ranks, so CUDA is asked from a child (see device_memory.h).
bool resolveMemory(Options* o, RunDescription* run, bool forks, int* exitCode) {
  const char* program = run->program.c_str();
  if (o->memory == "host") return true;
  const char* env = std::getenv("MYRIAD_DEVICE");
  const std::string device = env != nullptr ? env : "";
  if (!device.empty() && device != "auto" && device != "cuda") {
    if (o->memory.empty()) {
      o->memory = "host";
      return true;
    }
    std::fprintf(stderr, "%s: --memory cuda: MYRIAD_DEVICE=%s keeps the library off the GPU; unset it or set cuda\n",
                 program, device.c_str());
    *exitCode = 2;
    return false;
  }
  const CudaProbe probe = probeCuda(forks);
  if (probe.devices > 0) {
    o->memory = "cuda";
    run->memoryNote = probe.name + ", " + std::to_string(probe.devices) + (probe.devices == 1 ? " device" : " devices");
    return true;
  }
  if (o->memory.empty()) {
    o->memory = "host";
    return true;
  }
  std::fprintf(stderr, "%s: --memory cuda: %s; skipped\n", program, probe.reason.c_str());
  *exitCode = 77;
  return false;
}

// -A's comma list, item by item.
std::vector<std::string> splitAlgos(const std::string& text) {
  std::vector<std::string> out;
  size_t start = 0;
  while (true) {
    const size_t comma = text.find(',', start);
    out.push_back(text.substr(start, comma == std::string::npos ? std::string::npos : comma - start));
    if (comma == std::string::npos) return out;
    start = comma + 1;
  }
}

// Two or more algorithms of one collective ("allreduce.ring,allreduce.tree"): a paired run. MYRIAD_ALGO itself
// takes at most one algorithm per collective, so such a list can mean nothing else; one of several
// collectives ("allreduce.tree,alltoall.hier") is exported as MYRIAD_ALGO, as before.
bool isPairedList(const std::vector<std::string>& items) {
  if (items.size() < 2) return false;
  const std::string family = items[0].substr(0, items[0].find('.'));
  return std::all_of(items.begin(), items.end(),
                     [&](const std::string& a) { return a.substr(0, a.find('.')) == family; });
}

// An MPI launcher (Open MPI's mpirun, or a PMI one) in a build with MPI passes the id by MPI_Bcast, unless the
// user chose the rendezvous with MYRIAD_COMM_ID (the way out when the launcher is not the build's MPI's).
bool useMpiBootstrap(const LaunchInfo& launch) {
  const char* commId = std::getenv("MYRIAD_COMM_ID");
  if (commId != nullptr && *commId != '\0') return false;
  return mpiBootstrapBuilt() && (launch.kind == "ompi" || launch.kind == "pmi");
}

}  // namespace

bool prepareRun(int argc, char** argv, const PeerFlags* peer, Options* o, RunDescription* run, int* exitCode) {
  Options& options = *o;
  if (!parseOptions(argc, argv, &options, exitCode, peer)) return false;
  run->program = baseName(argc > 0 ? argv[0] : "perf");
  const char* program = run->program.c_str();
  *exitCode = 2;  // for each failure below; unread after a success
  if (peer != nullptr) {
    if (options.memory == "cuda") {
      std::fprintf(stderr, "%s: -m cuda: the peer programs time host memory only\n", program);
      return false;
    }
    options.memory = "host";
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
  const std::vector<std::string> items = splitAlgos(options.algo);
  if (!options.algo.empty() &&
      std::any_of(items.begin(), items.end(), [](const std::string& a) { return a.empty(); })) {
    std::fprintf(stderr, "%s: -A %s: a list needs two or more algorithms, none empty\n", program, options.algo.c_str());
    return 2;
  }
  const std::vector<std::string> paired = isPairedList(items) ? items : std::vector<std::string>{};
  if (!options.algo.empty() && paired.empty()) setenv("MYRIAD_ALGO", options.algo.c_str(), 1);
  const char* algo = std::getenv("MYRIAD_ALGO");
  run.algo = !paired.empty() ? options.algo : algo != nullptr ? algo : "";
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
    if (!paired.empty()) {  // one id per communicator would need one broadcast each: not wired up
      std::fprintf(stderr, "%s: -A %s: a list of algorithms (paired timing) needs forked ranks (-np), not %s\n",
                   program, options.algo.c_str(), launch.kind.c_str());
      return 2;
    }
    if (options.nranks > 0) {
      std::fprintf(stderr,
                   "%s: -np %d given, but the process was started by %s as rank %d of %d; "
                   "use one or the other\n",
                   program, options.nranks, launch.kind.c_str(), launch.rank, launch.size);
      return 2;
    }
    if (!resolveMemory(&options, &run, false, &exitCode)) return exitCode;
    myrUniqueId id;
    const bool viaMpi = useMpiBootstrap(launch);
    const bool haveId = viaMpi ? mpiBootstrapId(launch, &id, &error) : myriad_bench_id_from_env(launch, &id, &error);
    if (!haveId) {
      std::fprintf(stderr, "%s: rank %d: %s\n", program, launch.rank, error.c_str());
      return 1;
    }
    run.launcher = viaMpi ? launch.kind + "+mpi" : launch.kind;
    run.nranks = launch.size;
    const int code = runRank(coll, options, run, launch.rank, launch.localRank, launch.size, id);
    mpiBootstrapFinalize();
    return code;
  }

  const int nranks = options.nranks > 0 ? options.nranks : 1;
  if (!resolveMemory(&options, &run, nranks > 1, &exitCode)) return exitCode;
  run.launcher = nranks > 1 ? "fork" : "none";
  run.nranks = nranks;
  std::vector<myrUniqueId> ids(std::max<size_t>(1, paired.size()));
  for (myrUniqueId& id : ids) {
    const myrResult_t res = myrGetUniqueId(&id);
    if (res != myrSuccess) {
      std::fprintf(stderr, "%s: myrGetUniqueId failed: %s\n", program, myrGetErrorString(res));
      return 1;
    }
  }
  if (nranks == 1) return runRank(coll, options, run, 0, 0, 1, ids, paired);
  auto body = [&](int rank, int n) {
    if (options.hosts > 1) {  // in the child, before init: ranks [h*n/H, (h+1)*n/H) form host h
      std::string host = run.program + "-host" + std::to_string(static_cast<long>(rank) * options.hosts / n);
      setenv("MYRIAD_HOST_ID", host.c_str(), 1);
    }
    return runRank(coll, options, run, rank, rank, n, ids, paired);  // every forked rank is on this host
  };
  return runForkedRanks(nranks, body, program);
}

}  // namespace myriad::bench
