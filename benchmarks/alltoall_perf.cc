// myriad_alltoall_perf: the all-to-all table (nccl-tests' alltoall_perf). Size is each rank's whole send
// buffer; count is the block per peer. myrAllToAll allows sendbuff == recvbuff, so unlike nccl-tests the
// in-place half is checked too. busbw = algbw * (n-1)/n.
#include "benchmarks/common/coll_parts.h"
#include "benchmarks/common/collectives.h"
#include "tests/common/dtype_values.h"
#include "tests/common/reference.h"

namespace myriad::bench {
namespace {

CollCounts allToAllCounts(size_t bytes, size_t typeSize, int nranks) {
  CollCounts c;
  c.count = blockCount(bytes, typeSize, nranks);
  c.sendCount = c.count * static_cast<size_t>(nranks);
  c.recvCount = c.sendCount;
  return c;
}

// Block s of recvbuff is block `rank` of rank s's send buffer.
size_t allToAllCheckData(const CollArgs& a, const void* recv, uint64_t salt) {
  const size_t ts = test::dataTypeSize(a.type), blockBytes = a.counts.count * ts;
  size_t wrong = 0;
  for (int s = 0; s < a.nranks; ++s) {
    const auto* block = static_cast<const unsigned char*>(recv) + static_cast<size_t>(s) * blockBytes;
    wrong += patternWrong(block, a.counts.count, ts, s, static_cast<size_t>(a.rank) * blockBytes, salt);
  }
  return wrong;
}

myrResult_t allToAllRun(const CollArgs& a, const void* send, void* recv, myrComm_t comm, myrStream_t stream) {
  return myrAllToAll(send, recv, a.counts.count, a.type, comm, stream);
}

}  // namespace

const Collective kAllToAll{
    "alltoall",        /*hasOp=*/false, /*hasRoot=*/false, /*checkInPlace=*/true, allToAllCounts, patternInput,
    allToAllCheckData, allToAllRun,     shardedBw,
};

}  // namespace myriad::bench
