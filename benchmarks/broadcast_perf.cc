// myriad_broadcast_perf: the broadcast table (nccl-tests' broadcast_perf), root from -r (-1: each rank in
// turn). Only the root's input is filled; every rank must end with the root's pattern. busbw = algbw.
#include "benchmarks/common/coll_parts.h"
#include "benchmarks/common/collectives.h"
#include "tests/common/dtype_values.h"
#include "tests/common/reference.h"

namespace myriad::bench {
namespace {

void broadcastInitData(const CollArgs& a, void* send, uint64_t salt) {
  if (a.rank == a.root) test::fillPattern(send, a.counts.sendCount * test::dataTypeSize(a.type), a.rank, 0, salt);
}

size_t broadcastCheckData(const CollArgs& a, const void* recv, uint64_t salt) {
  return patternWrong(recv, a.counts.recvCount, test::dataTypeSize(a.type), a.root, 0, salt);
}

myrResult_t broadcastRun(const CollArgs& a, const void* send, void* recv, myrComm_t comm, myrStream_t stream) {
  return myrBroadcast(send, recv, a.counts.count, a.type, a.root, comm, stream);
}

}  // namespace

const Collective kBroadcast{
    "broadcast",        /*hasOp=*/false, /*hasRoot=*/true, /*checkInPlace=*/true, wholeCounts, broadcastInitData,
    broadcastCheckData, broadcastRun,    unitBw,
};

}  // namespace myriad::bench
