// myriad_reduce_perf: the reduce table (nccl-tests' reduce_perf), root from -r (-1: each rank in turn).
// Only the root's recvbuff is checked, as nccl-tests does; busbw = algbw.
#include "benchmarks/common/coll_parts.h"
#include "benchmarks/common/collectives.h"
#include "tests/common/reference.h"

namespace myriad::bench {
namespace {

size_t reduceCheckData(const CollArgs& a, const void* recv, uint64_t salt) {
  if (a.rank != a.root) return 0;
  return test::checkReduction(recv, a.counts.recvCount, a.type, a.op, a.nranks, salt).count;
}

myrResult_t reduceRun(const CollArgs& a, const void* send, void* recv, myrComm_t comm, myrStream_t stream) {
  return myrReduce(send, recv, a.counts.count, a.type, a.op, a.root, comm, stream);
}

}  // namespace

const Collective kReduce{
    "reduce",        /*hasOp=*/true, /*hasRoot=*/true, /*checkInPlace=*/true, wholeCounts, reductionInput,
    reduceCheckData, reduceRun,      unitBw,
};

}  // namespace myriad::bench
