// The sweep, in nccl-tests' order: for each type, op, root (-r -1: every rank) and size: out-of-place, then
// in-place, each timed (warmup, then iters) and, with -c 1, run once more on fresh inputs over a poisoned
// receive buffer and checked, so results left over from the timed loop cannot pass the check. Inputs are
// written and results read on host images that RankMemory moves to and from the buffers (the buffers
// themselves on host memory). MyriadRank is the RankOps of the myriad_*_perf binaries.
#include "benchmarks/common/bench_runner.h"

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "benchmarks/common/device_memory.h"
#include "benchmarks/common/timing.h"
#include "tests/common/dtype_values.h"

namespace myriad::bench {
namespace {

constexpr unsigned char kPoison = 0xA5;

// The median of a non-empty list (the mean of the middle two for an even count).
double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 == 1 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

// Elements of the receive buffer that any rank's in-place call touches (the offsets grow with the rank).
size_t recvExtent(const CollCounts& c, int nranks) {
  const size_t last = static_cast<size_t>(nranks - 1);
  return std::max(c.recvCount + last * c.recvInPlaceOffset, c.sendCount + last * c.sendInPlaceOffset);
}

// Largest send and receive areas over the types of the run, at maxBytes.
void bufferBytes(const Collective& coll, const Options& o, int nranks, size_t* sendBytes, size_t* recvBytes) {
  *sendBytes = *recvBytes = 0;
  for (myrDataType_t type : o.types) {
    const size_t ts = test::dataTypeSize(type);
    const CollCounts c = coll.getCounts(o.maxBytes, ts, nranks);
    *sendBytes = std::max(*sendBytes, c.sendCount * ts);
    *recvBytes = std::max(*recvBytes, recvExtent(c, nranks) * ts);
  }
}

// The roots of the sweep: -r, or every rank for -r -1 (nccl-tests); a collective without one runs once.
std::vector<int> sweepRoots(const Collective& coll, const Options& o, int nranks) {
  if (!coll.hasRoot || o.root != -1) return {o.root};
  std::vector<int> roots(static_cast<size_t>(nranks));
  for (int r = 0; r < nranks; ++r) roots[static_cast<size_t>(r)] = r;
  return roots;
}

// Myriad's rank: the Collective table's run on the stream of its memory (a host stream, NULL with -z 1, or a
// cudaStream_t).
class MyriadRank : public RankOps {
 public:
  MyriadRank(const Collective& coll, int rank, int nranks, RankMemory& memory)
      : coll_(coll), rank_(rank), nranks_(nranks), memory_(memory) {}
  int rank() const override { return rank_; }
  int nranks() const override { return nranks_; }
  bool call(const CollArgs& a, const void* send, void* recv, std::string* error) override {
    const myrResult_t res = coll_.run(a, send, recv, comm_, memory_.stream());
    if (res == myrSuccess) return true;
    *error = callError("call", res, comm_);
    return false;
  }
  bool sync(std::string* error) override {
    if (!memory_.sync(error)) {
      const char* last = myrGetLastError(comm_);
      if (last != nullptr && *last != '\0') *error += std::string(": ") + last;
      return false;
    }
    if (memory_.kind() != MemoryKind::kCuda) return true;
    // On a CUDA stream a failure while the calls ran stops the communicator instead of failing the sync.
    myrResult_t async = myrSuccess;
    const myrResult_t res = myrCommGetAsyncError(comm_, &async);
    if (res != myrSuccess) async = res;
    if (async == myrSuccess || async == myrInProgress) return true;
    *error = callError("a call on the CUDA stream", async, comm_);
    return false;
  }
  bool allReduceDoubles(double* values, size_t count, myrRedOp_t op, std::string* error) override {
    const myrResult_t res = myrAllReduce(values, values, count, myrFloat64, op, comm_, nullptr);
    if (res == myrSuccess) return true;
    *error = callError("myrAllReduce (cross-rank numbers)", res, comm_);
    return false;
  }

  bool registerBuffer(void* p, size_t bytes, std::string* error) override {
    void* handle = nullptr;
    const myrResult_t res = myrCommRegister(comm_, p, bytes, &handle);
    if (res != myrSuccess) {
      *error = callError("myrCommRegister", res, comm_);
      return false;
    }
    handles_.push_back(handle);
    return true;
  }
  void deregisterBuffers() override {
    for (void* h : handles_) (void)myrCommDeregister(comm_, h);
    handles_.clear();
  }

  myrComm_t comm_ = nullptr;

 private:
  const Collective& coll_;
  int rank_;
  int nranks_;
  RankMemory& memory_;
  std::vector<void*> handles_;
};

// Deregisters the sweep's buffers (-R 1) before they are freed.
struct Registered {
  const std::vector<RankOps*>& comms;
  ~Registered() {
    for (RankOps* c : comms) c->deregisterBuffers();
  }
};

// A buffer the calls use and the host image that inputs are written to and results read from: the same
// memory on the host, a staging copy for device memory (RankMemory moves the bytes between them).
struct Area {
  unsigned char* data = nullptr;
  unsigned char* image = nullptr;
  size_t bytes = 0;
};

// The bytes all ranks together must read and write at least: every rank reads its input and writes its output
// once; with a root, one side is the root's alone (broadcast reads one input, reduce writes one output).
double floorBytes(const Collective& coll, const CollCounts& c, size_t typeSize, int nranks) {
  const double n = nranks;
  if (coll.hasRoot) return (n + 1) * static_cast<double>(c.count * typeSize);
  return n * static_cast<double>((c.sendCount + c.recvCount) * typeSize);
}

struct Sweep {
  const Collective& coll;
  const Options& o;
  RankOps* ctx;  // the communicator timed now (paired: one per algorithm, in turn)
  RankMemory& memory;
  Area send;
  Area recv;

  static unsigned char* inPlaceSend(const CollArgs& a, unsigned char* recvBase) {
    return recvBase + a.counts.sendInPlaceOffset * test::dataTypeSize(a.type) * a.rank;
  }

  // Writes this rank's inputs for (type, op, root) at the largest size into both buffers, before any timing.
  bool fillInputs(const CollArgs& a, std::string* error) {
    coll.initData(a, send.image, 0);
    coll.initData(a, inPlaceSend(a, recv.image), 0);
    return memory.upload(send.data, send.image, send.bytes, error) &&
           memory.upload(recv.data, recv.image, recv.bytes, error);
  }

  // One call of one half (out of place or in place) on the communicator timed now.
  bool callHalf(const CollArgs& a, bool inPlace, std::string* error) {
    const size_t recvOffset = inPlace ? a.counts.recvInPlaceOffset * test::dataTypeSize(a.type) * a.rank : 0;
    return ctx->call(a, inPlace ? inPlaceSend(a, recv.data) : send.data, recv.data + recvOffset, error);
  }

  // Times `iters` calls of one half after `warmup`: seconds per call as -a combines them over the ranks (the
  // same on every rank).
  bool timeHalf(const CollArgs& a, bool inPlace, int warmup, int iters, double* combined, std::string* error) {
    auto call = [&](std::string* e) { return callHalf(a, inPlace, e); };
    double seconds = 0;
    return timeCalls(*ctx, warmup, iters, call, &seconds, error) &&
           combineAcrossRanks(*ctx, seconds, o.average, combined, error);
  }

  // Times (unless `timed`: seconds per call already measured) and checks one half of one row.
  bool runHalf(const CollArgs& a, bool inPlace, size_t bytes, uint64_t salt, ResultHalf* h, std::string* error,
               const double* timed = nullptr) {
    const size_t ts = test::dataTypeSize(a.type);
    const size_t recvOffset = inPlace ? a.counts.recvInPlaceOffset * ts * a.rank : 0;
    RankOps& ctx = *this->ctx;
    double combined = 0;
    if (timed != nullptr) {
      combined = *timed;
    } else if (!timeHalf(a, inPlace, o.warmupIters, o.iters, &combined, error)) {
      return false;
    }
    double wrong = 0;
    const bool check = o.check && (!inPlace || coll.checkInPlace);
    if (check) {
      // Fresh inputs over a poisoned receive area; an in-place send area lies inside it.
      const size_t extent = recvExtent(a.counts, a.nranks) * ts;
      std::memset(recv.image, kPoison, extent);
      coll.initData(a, inPlace ? inPlaceSend(a, recv.image) : send.image, salt);
      if (!memory.upload(recv.data, recv.image, extent, error)) return false;
      if (!inPlace && !memory.upload(send.data, send.image, a.counts.sendCount * ts, error)) return false;
      if (!callHalf(a, inPlace, error)) {
        *error = "checked " + *error;
        return false;
      }
      if (!ctx.sync(error)) return false;
      if (!memory.download(recv.image, recv.data, extent, error)) return false;
      wrong = static_cast<double>(coll.checkData(a, recv.image + recvOffset, salt));
    }
    if (!sumAcrossRanks(ctx, wrong, &h->wrong, error)) return false;
    h->timeUs = combined * 1e6;
    h->checked = check;
    coll.getBw(bytes, combined, ctx.nranks(), &h->algBw, &h->busBw);
    return true;
  }
};

// Allocates the buffer of an area and, for device memory, its host image.
bool allocateArea(RankMemory& memory, size_t bytes, bool libraryAlloc, Area* area, std::vector<unsigned char>* image,
                  std::string* error) {
  area->bytes = bytes;
  area->data = memory.allocate(bytes, libraryAlloc, error);
  if (area->data == nullptr) return false;
  if (memory.kind() == MemoryKind::kHost) {
    area->image = area->data;
    return true;
  }
  image->assign(std::max<size_t>(bytes, 1), 0);
  area->image = image->data();
  return true;
}

}  // namespace

bool runSweep(const Collective& coll, const Options& o, const RunDescription& run, RankOps& ctx, double* wrongTotal,
              std::string* error, RankMemory* memory) {
  return runSweep(coll, o, run, std::vector<RankOps*>{&ctx}, {}, wrongTotal, error, memory);
}

bool runSweep(const Collective& coll, const Options& o, const RunDescription& run, const std::vector<RankOps*>& comms,
              const std::vector<std::string>& algos, double* wrongTotal, std::string* error, RankMemory* memory) {
  RankOps& ctx = *comms.front();
  std::unique_ptr<RankMemory> hostMemory;
  if (memory == nullptr) {
    hostMemory = makeRankMemory(MemoryKind::kHost, /*blocking=*/true);
    memory = hostMemory.get();
  }
  size_t sendBytes = 0, recvBytes = 0;
  bufferBytes(coll, o, ctx.nranks(), &sendBytes, &recvBytes);
  Area send, recv;
  std::vector<unsigned char> sendImage, recvImage;
  if (!allocateArea(*memory, sendBytes, o.registerBuffers, &send, &sendImage, error) ||
      !allocateArea(*memory, recvBytes, o.registerBuffers, &recv, &recvImage, error))
    return false;
  Registered registered{comms};
  for (RankOps* c : comms)
    for (auto [p, n] : {std::pair{send.data, sendBytes}, std::pair{recv.data, recvBytes}})
      if (o.registerBuffers && n > 0 && !c->registerBuffer(p, n, error)) return false;
  RankDescription me;
  me.rank = ctx.rank();
  me.pid = static_cast<int>(getpid());
  gethostname(me.host, sizeof(me.host) - 1);
  me.device = memory->device();
  std::snprintf(me.deviceName, sizeof(me.deviceName), "%s", memory->deviceName().c_str());
  std::vector<unsigned char> all;
  if (!gatherBytes(ctx, &me, sizeof(me), &all, error)) return false;
  std::vector<RankDescription> ranks(static_cast<size_t>(ctx.nranks()));
  std::memcpy(ranks.data(), all.data(), all.size());

  const bool printer = ctx.rank() == 0;
  std::FILE* json = nullptr;
  if (printer && !o.jsonPath.empty()) json = std::fopen(o.jsonPath.c_str(), "w");
  if (printer && !o.jsonPath.empty() && json == nullptr) {
    std::fprintf(stderr, "%s: cannot write --json %s: %s\n", run.program.c_str(), o.jsonPath.c_str(),
                 std::strerror(errno));
  }
  if (printer) printRunHeader(stdout, o, run, ranks);
  if (printer) printTableHeader(stdout, o.floorGbps > 0);

  Sweep sweep{coll, o, &ctx, *memory, send, recv};
  const std::vector<size_t> sizes = sizeSweep(o);
  const std::vector<myrRedOp_t> ops = coll.hasOp ? o.ops : std::vector<myrRedOp_t>{myrSum};
  double busBwSum = 0;
  int busBwCount = 0;
  bool ok = true;
  const std::vector<int> roots = sweepRoots(coll, o, ctx.nranks());
  for (size_t t = 0; ok && t < o.types.size(); ++t) {
    for (size_t k = 0; ok && k < ops.size(); ++k) {
      for (size_t r = 0; ok && r < roots.size(); ++r) {
        CollArgs a{o.types[t], ops[k], roots[r], ctx.rank(), ctx.nranks(), {}};
        const size_t ts = test::dataTypeSize(a.type);
        a.counts = coll.getCounts(o.maxBytes, ts, ctx.nranks());  // valid values everywhere before timing
        ok = sweep.fillInputs(a, error);
        for (size_t s = 0; ok && s < sizes.size(); ++s) {
          a.counts = coll.getCounts(sizes[s], ts, ctx.nranks());
          ResultRow row;
          row.bytes = std::max(a.counts.sendCount, a.counts.recvCount) * ts;
          row.count = a.counts.count;
          row.type = test::dataTypeName(a.type);
          row.op = coll.hasOp ? test::redOpName(a.op) : "none";
          row.root = coll.hasRoot ? a.root : -1;
          if (o.floorGbps > 0) row.floorUs = floorBytes(coll, a.counts, ts, ctx.nranks()) / (o.floorGbps * 1e3);
          const uint64_t salt = (t * 131 + k * 17 + r * 7919 + s) * 2 + 1;
          // Out of place in --blocks blocks of calls, every communicator in turn in each block (the first one
          // rotating), a communicator's time the median of its blocks; then each one's check and in-place half.
          const size_t nc = comms.size();
          const int blocks = std::min(o.blocks, o.iters);
          std::vector<std::vector<double>> blockTimes(nc);
          for (int b = 0; ok && b < blocks; ++b) {
            const int iters = o.iters / blocks + (b < o.iters % blocks ? 1 : 0);
            for (size_t j = 0; ok && j < nc; ++j) {
              const size_t c = (s + static_cast<size_t>(b) + j) % nc;
              sweep.ctx = comms[c];
              double t = 0;
              ok = sweep.timeHalf(a, false, b == 0 ? o.warmupIters : 0, iters, &t, error);
              blockTimes[c].push_back(t);
            }
          }
          std::vector<ResultRow> rows(nc, row);
          for (size_t c = 0; ok && c < nc; ++c) {
            sweep.ctx = comms[c];
            if (c < algos.size() && nc > 1) rows[c].algo = algos[c];
            const double timed = median(blockTimes[c]);
            ok = sweep.runHalf(a, false, row.bytes, salt, &rows[c].outOfPlace, error, &timed) &&
                 sweep.runHalf(a, true, row.bytes, salt + 1, &rows[c].inPlace, error);
          }
          if (!ok) break;
          for (const ResultRow& done : rows) {
            *wrongTotal += done.outOfPlace.wrong + done.inPlace.wrong;
            busBwSum += done.outOfPlace.busBw + done.inPlace.busBw;
            busBwCount += 2;
            if (printer) printRow(stdout, done);
            if (json != nullptr) writeJsonRow(json, run, o, done);
          }
        }
      }
    }
  }
  if (json != nullptr) std::fclose(json);
  if (ok && printer) printFooter(stdout, *wrongTotal, busBwCount > 0 ? busBwSum / busBwCount : 0.0);
  return ok;
}

// --paths: this rank's network path telemetry (myrDebugNetPaths), after the sweep.
void printPaths(myrComm_t comm, int rank) {
  size_t len = 0;
  if (myrDebugNetPaths(comm, nullptr, &len) != myrSuccess) return;
  std::string text(len, '\0');
  if (myrDebugNetPaths(comm, text.data(), &len) != myrSuccess) return;
  text.resize(std::strlen(text.c_str()));
  std::printf("# network paths of rank %d%s\n%s", rank, text.empty() ? ": none (no multipath peers)" : "",
              text.c_str());
  std::fflush(stdout);
}

int runRank(const Collective& coll, const Options& o, const RunDescription& run, int rank, int localRank, int nranks,
            const myrUniqueId& id) {
  return runRank(coll, o, run, rank, localRank, nranks, std::vector<myrUniqueId>{id}, {});
}

int runRank(const Collective& coll, const Options& o, const RunDescription& run, int rank, int localRank, int nranks,
            const std::vector<myrUniqueId>& ids, const std::vector<std::string>& algos) {
  const char* program = run.program.c_str();
  // Before the communicator: the library takes the device current at its first call as the process's.
  std::unique_ptr<RankMemory> memory =
      makeRankMemory(o.memory == "cuda" ? MemoryKind::kCuda : MemoryKind::kHost, o.blocking);
  std::string error;
  if (!memory->open(localRank, &error)) {
    std::fprintf(stderr, "%s: rank %d: %s memory: %s\n", program, rank, o.memory.c_str(), error.c_str());
    return 1;
  }
  std::vector<std::unique_ptr<MyriadRank>> ranks;
  std::vector<RankOps*> comms;
  auto leave = [&](bool abort) {
    myrResult_t worst = myrSuccess;
    for (auto& c : ranks) {
      if (c->comm_ == nullptr) continue;
      const myrResult_t res = abort ? myrCommAbort(c->comm_) : myrCommDestroy(c->comm_);
      if (res != myrSuccess) worst = res;
    }
    return worst;
  };
  for (size_t i = 0; i < ids.size(); ++i) {
    // Paired: each communicator reads its algorithm from MYRIAD_ALGO at init, as a lone one does.
    if (i < algos.size()) setenv("MYRIAD_ALGO", algos[i].c_str(), 1);
    ranks.push_back(std::make_unique<MyriadRank>(coll, rank, nranks, *memory));
    const myrResult_t init = myrCommInitRank(&ranks.back()->comm_, nranks, ids[i], rank);
    if (init != myrSuccess) {
      std::fprintf(stderr, "%s: rank %d: myrCommInitRank (%d ranks%s%s) failed: %s\n", program, rank, nranks,
                   i < algos.size() ? ", -A " : "", i < algos.size() ? algos[i].c_str() : "", myrGetErrorString(init));
      ranks.back()->comm_ = nullptr;
      (void)leave(true);
      return 1;
    }
    comms.push_back(ranks.back().get());
  }
  double wrongTotal = 0;
  const bool ok = runSweep(coll, o, run, comms, algos, &wrongTotal, &error, memory.get());
  if (!ok) {
    std::fprintf(stderr, "%s: rank %d: %s\n", program, rank, error.c_str());
    (void)leave(true);  // peers may be gone: do not wait for them
    return 1;
  }
  if (o.paths)
    for (auto& c : ranks) printPaths(c->comm_, rank);
  const myrResult_t res = leave(false);
  if (res != myrSuccess) {
    std::fprintf(stderr, "%s: rank %d: myrCommDestroy failed: %s\n", program, rank, myrGetErrorString(res));
    return 1;
  }
  return wrongTotal > 0 ? 1 : 0;
}

}  // namespace myriad::bench
