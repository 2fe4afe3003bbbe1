// myriad_all_reduce_perf: the all-reduce table for the shared benchmark driver (nccl-tests' all_reduce_perf).
// Each rank sends and receives `count` elements; busbw = algbw * 2(n-1)/n, what each link of a ring carries.
#include "benchmarks/common/coll_parts.h"
#include "benchmarks/common/collectives.h"
#include "tests/common/reference.h"

namespace myriad::bench {
namespace {

size_t allReduceCheckData(const CollArgs& a, const void* recv, uint64_t salt) {
  return test::checkReduction(recv, a.counts.recvCount, a.type, a.op, a.nranks, salt).count;
}

myrResult_t allReduceRun(const CollArgs& a, const void* send, void* recv, myrComm_t comm, myrStream_t stream) {
  return myrAllReduce(send, recv, a.counts.count, a.type, a.op, comm, stream);
}

void allReduceBw(size_t bytes, double seconds, int nranks, double* algBw, double* busBw) {
  scaledBw(bytes, seconds, 2.0 * (nranks - 1) / nranks, algBw, busBw);
}

}  // namespace

const Collective kAllReduce{
    "all_reduce",   /*hasOp=*/true,     /*hasRoot=*/false, /*checkInPlace=*/true, wholeCounts,
    reductionInput, allReduceCheckData, allReduceRun,      allReduceBw,
};

}  // namespace myriad::bench
