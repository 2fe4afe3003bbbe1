// myriad_reduce_scatter_perf: the reduce-scatter table (nccl-tests' reduce_scatter_perf). Size is the send
// buffer; count is the block each rank receives. In place, recvbuff = sendbuff + rank * count.
// busbw = algbw * (n-1)/n.
#include "benchmarks/common/coll_parts.h"
#include "benchmarks/common/collectives.h"
#include "tests/common/reference.h"

namespace myriad::bench {
namespace {

CollCounts reduceScatterCounts(size_t bytes, size_t typeSize, int nranks) {
  CollCounts c;
  c.count = blockCount(bytes, typeSize, nranks);
  c.sendCount = c.count * static_cast<size_t>(nranks);
  c.recvCount = c.count;
  c.recvInPlaceOffset = c.count;
  return c;
}

// Rank r's block is elements r * count.. of the reduced send buffers.
size_t reduceScatterCheckData(const CollArgs& a, const void* recv, uint64_t salt) {
  const size_t first = static_cast<size_t>(a.rank) * a.counts.count;
  return test::checkReduction(recv, a.counts.recvCount, a.type, a.op, a.nranks, salt, first).count;
}

myrResult_t reduceScatterRun(const CollArgs& a, const void* send, void* recv, myrComm_t comm, myrStream_t stream) {
  return myrReduceScatter(send, recv, a.counts.count, a.type, a.op, comm, stream);
}

}  // namespace

const Collective kReduceScatter{
    "reduce_scatter",      /*hasOp=*/true,      /*hasRoot=*/false,
    /*checkInPlace=*/true, reduceScatterCounts, reductionInput,    reduceScatterCheckData, reduceScatterRun, shardedBw,
};

}  // namespace myriad::bench
