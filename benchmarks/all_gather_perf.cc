// myriad_all_gather_perf: the all-gather table (nccl-tests' all_gather_perf). Size is the gathered buffer;
// count is the block of each rank. In place, a rank's block already sits at rank * count of recvbuff.
// busbw = algbw * (n-1)/n: each rank receives all blocks but its own.
#include "benchmarks/common/coll_parts.h"
#include "benchmarks/common/collectives.h"
#include "tests/common/dtype_values.h"
#include "tests/common/reference.h"

namespace myriad::bench {
namespace {

CollCounts allGatherCounts(size_t bytes, size_t typeSize, int nranks) {
  CollCounts c;
  c.count = blockCount(bytes, typeSize, nranks);
  c.sendCount = c.count;
  c.recvCount = c.count * static_cast<size_t>(nranks);
  c.sendInPlaceOffset = c.count;
  return c;
}

// Block s of recvbuff is rank s's send buffer.
size_t allGatherCheckData(const CollArgs& a, const void* recv, uint64_t salt) {
  const size_t ts = test::dataTypeSize(a.type);
  size_t wrong = 0;
  for (int s = 0; s < a.nranks; ++s) {
    const auto* block = static_cast<const unsigned char*>(recv) + static_cast<size_t>(s) * a.counts.count * ts;
    wrong += patternWrong(block, a.counts.count, ts, s, 0, salt);
  }
  return wrong;
}

myrResult_t allGatherRun(const CollArgs& a, const void* send, void* recv, myrComm_t comm, myrStream_t stream) {
  return myrAllGather(send, recv, a.counts.count, a.type, comm, stream);
}

}  // namespace

const Collective kAllGather{
    "all_gather",       /*hasOp=*/false, /*hasRoot=*/false, /*checkInPlace=*/true, allGatherCounts, patternInput,
    allGatherCheckData, allGatherRun,    shardedBw,
};

}  // namespace myriad::bench
