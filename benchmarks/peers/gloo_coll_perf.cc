// gloo_coll_perf: Gloo's collectives over its TCP transport in the myriad_*_perf harness (same tables,
// columns and --json rows). -np N forks N local ranks that meet in a FileStore in a fresh temporary directory;
// --rank R --size N --store DIR --iface IP starts one rank (DIR shared and empty at start, IP this rank's
// address), so a script can place ranks in different network namespaces. allreduce_hd (the older,
// in-place-only class) and in-place alltoall copy into place first; those copies are timed too.
#include <gloo/algorithm.h>
#include <gloo/allgather.h>
#include <gloo/allreduce.h>
#include <gloo/allreduce_halving_doubling.h>
#include <gloo/alltoall.h>
#include <gloo/broadcast.h>
#include <gloo/config.h>
#include <gloo/math.h>
#include <gloo/rendezvous/context.h>
#include <gloo/rendezvous/file_store.h>
#include <gloo/transport/tcp/device.h>
#include <stdlib.h>

#include <CLI/CLI.hpp>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <exception>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "benchmarks/common/bench_main.h"
#include "benchmarks/common/collectives.h"
#include "benchmarks/common/launcher.h"
#include "benchmarks/peers/peer.h"

namespace myriad::bench {
namespace {

const std::vector<PeerCall> kCalls{
    {"allreduce_ring", &kAllReduce, "ring"},
    {"allreduce_bcube", &kAllReduce, "bcube"},
    {"allreduce_hd", &kAllReduce, "halving_doubling"},
    {"allgather", &kAllGather, ""},
    {"broadcast", &kBroadcast, ""},
    {"alltoall", &kAllToAll, ""},
};

using ReduceFn = void (*)(void*, const void*, const void*, size_t);

template <typename T>
ReduceFn reduceFn(myrRedOp_t op) {
  switch (op) {
    case myrProd: return &gloo::product<T>;
    case myrMax: return &gloo::max<T>;
    case myrMin: return &gloo::min<T>;
    default: return &gloo::sum<T>;  // checkPeerOptions rejects avg
  }
}

const gloo::ReductionFunction<float>* reductionFunction(myrRedOp_t op) {
  switch (op) {
    case myrProd: return gloo::ReductionFunction<float>::product;
    case myrMax: return gloo::ReductionFunction<float>::max;
    case myrMin: return gloo::ReductionFunction<float>::min;
    default: return gloo::ReductionFunction<float>::sum;
  }
}

class GlooRank : public RankOps {
 public:
  GlooRank(const PeerCall& call, std::shared_ptr<gloo::Context> context) : call_(call), context_(std::move(context)) {}
  int rank() const override { return context_->rank; }
  int nranks() const override { return context_->size; }
  bool sync(std::string* /*error*/) override { return true; }

  // Gloo reports failures (a peer gone, a timeout) as exceptions; they end here.
  bool call(const CollArgs& a, const void* send, void* recv, std::string* error) override {
    try {
      issue(a, static_cast<float*>(const_cast<void*>(send)), static_cast<float*>(recv));
      return true;
    } catch (const std::exception& e) {
      *error = std::string("call failed: ") + e.what();
      return false;
    }
  }

  bool allReduceDoubles(double* values, size_t count, myrRedOp_t op, std::string* error) override {
    try {
      gloo::AllreduceOptions opts(context_);
      opts.setOutput(values, count);
      opts.setReduceFunction(reduceFn<double>(op));
      gloo::allreduce(opts);
      return true;
    } catch (const std::exception& e) {
      *error = std::string("gloo::allreduce (cross-rank numbers) failed: ") + e.what();
      return false;
    }
  }

 private:
  void issue(const CollArgs& a, float* send, float* recv) {
    const size_t count = a.counts.count, n = static_cast<size_t>(context_->size);
    if (count == 0) return;  // nothing to move (a block under 16 bytes), and Gloo divides by the size
    const Collective* t = call_.table;
    if (t == &kAllReduce && std::strcmp(call_.algo, "halving_doubling") == 0) return halvingDoubling(a, send, recv);
    if (t == &kAllReduce) {
      gloo::AllreduceOptions opts(context_);
      opts.setAlgorithm(std::strcmp(call_.algo, "bcube") == 0 ? gloo::AllreduceOptions::Algorithm::BCUBE
                                                              : gloo::AllreduceOptions::Algorithm::RING);
      if (send != recv) opts.setInput(send, count);
      opts.setOutput(recv, count);
      opts.setReduceFunction(reduceFn<float>(a.op));
      return gloo::allreduce(opts);
    }
    if (t == &kAllGather) {  // without an input, the rank's block is taken in place
      gloo::AllgatherOptions opts(context_);
      if (send != recv + static_cast<size_t>(context_->rank) * count) opts.setInput(send, count);
      opts.setOutput(recv, count * n);
      return gloo::allgather(opts);
    }
    if (t == &kBroadcast) {
      gloo::BroadcastOptions opts(context_);
      opts.setRoot(a.root);
      if (context_->rank == a.root && send != recv) opts.setInput(send, count);
      opts.setOutput(recv, count);
      return gloo::broadcast(opts);
    }
    gloo::AlltoallOptions opts(context_);  // reads its input while it writes its output: never the same
    if (send == recv) {
      scratch_.assign(send, send + count * n);
      send = scratch_.data();
    }
    opts.setInput(send, count * n);
    opts.setOutput(recv, count * n);
    gloo::alltoall(opts);
  }

  // The class allocates and registers its buffers when made, so one is kept per (buffer, count, op).
  void halvingDoubling(const CollArgs& a, const float* send, float* recv) {
    if (hd_ == nullptr || hdRecv_ != recv || hdCount_ != a.counts.count || hdOp_ != a.op) {
      hd_ = std::make_unique<gloo::AllreduceHalvingDoubling<float>>(
          context_, std::vector<float*>{recv}, static_cast<int>(a.counts.count), reductionFunction(a.op));
      hdRecv_ = recv;
      hdCount_ = a.counts.count;
      hdOp_ = a.op;
    }
    if (send != recv) std::memcpy(recv, send, a.counts.count * sizeof(float));
    hd_->run();
  }

  const PeerCall& call_;
  std::shared_ptr<gloo::Context> context_;
  std::vector<float> scratch_;
  std::unique_ptr<gloo::Algorithm> hd_;
  float* hdRecv_ = nullptr;
  size_t hdCount_ = 0;
  myrRedOp_t hdOp_ = myrSum;
};

struct Placement {  // --rank --size --store --iface
  int rank = -1;
  int size = 0;
  std::string store;
  std::string iface = "127.0.0.1";
};

// Joins the full mesh of `size` ranks at `store` and runs the sweep.
int runGlooRank(const PeerCall& call, const Options& o, const RunDescription& run, int rank, int size,
                const std::string& store, const std::string& iface) {
  std::shared_ptr<gloo::rendezvous::Context> context;
  try {
    gloo::transport::tcp::attr attr;
    attr.hostname = iface;
    std::shared_ptr<gloo::transport::Device> device = gloo::transport::tcp::CreateDevice(attr);
    gloo::rendezvous::FileStore files(store);
    context = std::make_shared<gloo::rendezvous::Context>(rank, size);
    context->setTimeout(std::chrono::seconds(120));
    context->connectFullMesh(files, device);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "%s: rank %d: connecting %d ranks at %s (%s) failed: %s\n", run.program.c_str(), rank, size,
                 store.c_str(), iface.c_str(), e.what());
    return 1;
  }
  GlooRank ops(call, context);
  bool failed = false;
  return runPeerRank(*call.table, o, run, ops, &failed);
}

int run(int argc, char** argv) {
  Options options;
  RunDescription run;
  Placement at;
  int exitCode = 0;
  const PeerFlags flags{
      peerCallNames(kCalls), [&at](CLI::App& app) {
        app.add_option("--rank", at.rank, "launcher mode: this rank")->check(CLI::NonNegativeNumber);
        app.add_option("--size", at.size, "launcher mode: number of ranks")->check(CLI::PositiveNumber);
        app.add_option("--store", at.store, "launcher mode: FileStore directory, shared and empty");
        app.add_option("--iface", at.iface, "address the TCP device binds to")->capture_default_str();
      }};
  if (!prepareRun(argc, argv, &flags, &options, &run, &exitCode)) return exitCode;
  const char* program = run.program.c_str();
  if (!checkPeerOptions(program, {myrFloat32}, &options)) return 2;
  const bool launched = at.rank >= 0 || at.size > 0 || !at.store.empty();
  if (launched && (at.rank < 0 || at.size <= at.rank || at.store.empty() || options.nranks > 0)) {
    std::fprintf(stderr, "%s: launcher mode needs --rank R --size N --store DIR (R < N), and no -np\n", program);
    return 2;
  }
  const PeerCall& call = chosenCall(kCalls, options);
  run.collective = call.table->name;
  run.library = "gloo";
  run.title = "Gloo " + std::to_string(GLOO_VERSION_MAJOR) + "." + std::to_string(GLOO_VERSION_MINOR) + "." +
              std::to_string(GLOO_VERSION_PATCH);
  run.algo = call.algo;
  if (launched) {
    run.launcher = "store";
    run.nranks = at.size;
    return runGlooRank(call, options, run, at.rank, at.size, at.store, at.iface);
  }
  const int nranks = options.nranks > 0 ? options.nranks : 1;
  run.launcher = nranks > 1 ? "fork" : "none";
  run.nranks = nranks;
  char dir[] = "/tmp/gloo_coll_perf.XXXXXX";
  if (mkdtemp(dir) == nullptr) {
    std::fprintf(stderr, "%s: cannot make a store directory in /tmp: %s\n", program, std::strerror(errno));
    return 1;
  }
  auto body = [&](int rank, int n) { return runGlooRank(call, options, run, rank, n, dir, at.iface); };
  const int code = nranks == 1 ? body(0, 1) : runForkedRanks(nranks, body, program);
  std::error_code ignored;
  std::filesystem::remove_all(dir, ignored);
  return code;
}

}  // namespace
}  // namespace myriad::bench

int main(int argc, char** argv) {
  return myriad::bench::run(argc, argv);
}
