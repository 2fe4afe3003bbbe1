// mpi_coll_perf: Open MPI's collectives in the myriad_*_perf harness (same tables, columns and --json rows),
// started by mpirun: mpirun --bind-to none -np N mpi_coll_perf -c allreduce -b 1M -e 64M -f 4. Open MPI 4.1
// is page-fault bound unless glibc keeps freed memory: set MALLOC_MMAP_MAX_=0 MALLOC_TRIM_THRESHOLD_=<large>
// (e.g. 4294967296) in the caller's environment (mpirun -x NAME forwards them to other hosts) for its best.
// In place follows Myriad's placement: reduce-scatter moves MPI_IN_PLACE's block 0 result to the rank's block.
#include <mpi.h>

#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "benchmarks/common/bench_main.h"
#include "benchmarks/common/collectives.h"
#include "benchmarks/peers/peer.h"
#include "tests/common/dtype_values.h"

namespace myriad::bench {
namespace {

const std::vector<PeerCall> kCalls{
    {"allreduce", &kAllReduce, ""}, {"allgather", &kAllGather, ""}, {"reducescatter", &kReduceScatter, ""},
    {"alltoall", &kAllToAll, ""},   {"broadcast", &kBroadcast, ""},
};

const std::vector<myrDataType_t> kTypes{myrInt8,  myrUint8,  myrInt32,   myrUint32,
                                        myrInt64, myrUint64, myrFloat32, myrFloat64};

MPI_Datatype mpiType(myrDataType_t t) {
  switch (t) {
    case myrInt8: return MPI_INT8_T;
    case myrUint8: return MPI_UINT8_T;
    case myrInt32: return MPI_INT32_T;
    case myrUint32: return MPI_UINT32_T;
    case myrInt64: return MPI_INT64_T;
    case myrUint64: return MPI_UINT64_T;
    case myrFloat64: return MPI_DOUBLE;
    default: return MPI_FLOAT;  // checkPeerOptions allows only kTypes
  }
}

MPI_Op mpiOp(myrRedOp_t op) {
  switch (op) {
    case myrProd: return MPI_PROD;
    case myrMax: return MPI_MAX;
    case myrMin: return MPI_MIN;
    default: return MPI_SUM;  // checkPeerOptions rejects avg
  }
}

std::string mpiError(const char* call, int code) {
  char text[MPI_MAX_ERROR_STRING];
  int length = 0;
  MPI_Error_string(code, text, &length);
  return std::string(call) + " failed: " + std::string(text, static_cast<size_t>(length));
}

class MpiRank : public RankOps {
 public:
  MpiRank(const PeerCall& call, int rank, int nranks) : call_(call), rank_(rank), nranks_(nranks) {}
  int rank() const override { return rank_; }
  int nranks() const override { return nranks_; }
  bool sync(std::string* /*error*/) override { return true; }

  bool call(const CollArgs& a, const void* send, void* recv, std::string* error) override {
    const int code = issue(a, send, recv);
    if (code == MPI_SUCCESS) return true;
    *error = mpiError("call", code);
    return false;
  }

  bool allReduceDoubles(double* values, size_t count, myrRedOp_t op, std::string* error) override {
    const int code =
        MPI_Allreduce(MPI_IN_PLACE, values, static_cast<int>(count), MPI_DOUBLE, mpiOp(op), MPI_COMM_WORLD);
    if (code == MPI_SUCCESS) return true;
    *error = mpiError("MPI_Allreduce (cross-rank numbers)", code);
    return false;
  }

 private:
  int issue(const CollArgs& a, const void* send, void* recv) {
    const MPI_Datatype type = mpiType(a.type);
    const int count = static_cast<int>(a.counts.count);
    const size_t blockBytes = a.counts.count * test::dataTypeSize(a.type);
    auto* out = static_cast<unsigned char*>(recv);
    const auto* in = static_cast<const unsigned char*>(send);
    const Collective* t = call_.table;
    if (t == &kAllReduce) {
      return MPI_Allreduce(in == out ? MPI_IN_PLACE : send, recv, count, type, mpiOp(a.op), MPI_COMM_WORLD);
    }
    if (t == &kAllGather) {
      if (in == out + static_cast<size_t>(rank_) * blockBytes) {
        return MPI_Allgather(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, recv, count, type, MPI_COMM_WORLD);
      }
      return MPI_Allgather(send, count, type, recv, count, type, MPI_COMM_WORLD);
    }
    if (t == &kReduceScatter) {
      if (out != in + static_cast<size_t>(rank_) * blockBytes) {
        return MPI_Reduce_scatter_block(send, recv, count, type, mpiOp(a.op), MPI_COMM_WORLD);
      }
      auto* whole = const_cast<unsigned char*>(in);
      const int code = MPI_Reduce_scatter_block(MPI_IN_PLACE, whole, count, type, mpiOp(a.op), MPI_COMM_WORLD);
      if (code == MPI_SUCCESS && out != whole) std::memmove(out, whole, blockBytes);
      return code;
    }
    if (t == &kAllToAll) {
      if (in == out) return MPI_Alltoall(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, recv, count, type, MPI_COMM_WORLD);
      return MPI_Alltoall(send, count, type, recv, count, type, MPI_COMM_WORLD);
    }
    // Broadcast works in place: out of place, the root first copies its input to its output.
    if (rank_ == a.root && in != out) std::memcpy(out, in, blockBytes);
    return MPI_Bcast(recv, count, type, a.root, MPI_COMM_WORLD);
  }

  const PeerCall& call_;
  int rank_;
  int nranks_;
};

// "Open MPI 4.1.4" from "Open MPI v4.1.4, package: ...".
std::string libraryTitle() {
  char text[MPI_MAX_LIBRARY_VERSION_STRING];
  int length = 0;
  MPI_Get_library_version(text, &length);
  std::string title(text, static_cast<size_t>(length));
  title = title.substr(0, title.find(','));
  if (const size_t v = title.find(" v"); v != std::string::npos) title.erase(v + 1, 1);
  return title;
}

int run(int argc, char** argv) {
  Options options;
  RunDescription run;
  int exitCode = 0;
  const PeerFlags flags{peerCallNames(kCalls), {}};
  if (!prepareRun(argc, argv, &flags, &options, &run, &exitCode)) return exitCode;
  const char* program = run.program.c_str();
  if (!checkPeerOptions(program, kTypes, &options)) return 2;
  if (options.nranks > 0) {
    std::fprintf(stderr, "%s: -np: start the ranks with mpirun -np N instead\n", program);
    return 2;
  }
  const PeerCall& call = chosenCall(kCalls, options);
  MPI_Init(&argc, &argv);
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  int rank = 0, nranks = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &nranks);
  run.collective = call.table->name;
  run.library = "openmpi";
  run.title = libraryTitle();
  run.launcher = "mpirun";
  run.algo = call.algo;
  run.nranks = nranks;
  MpiRank ops(call, rank, nranks);
  bool failed = false;
  const int code = runPeerRank(*call.table, options, run, ops, &failed);
  if (failed) MPI_Abort(MPI_COMM_WORLD, code);  // the others may be waiting in a call
  MPI_Finalize();
  return code;
}

}  // namespace
}  // namespace myriad::bench

int main(int argc, char** argv) {
  return myriad::bench::run(argc, argv);
}
