// myriad_sendrecv_perf: the send/recv table (nccl-tests' sendrecv_perf). Every rank sends to rank + 1 and
// receives from rank - 1 (mod n) in one group. In place (sendbuff == recvbuff) is timed but, as in
// nccl-tests, not checked: the API does not define it. busbw = algbw.
#include "benchmarks/common/coll_parts.h"
#include "benchmarks/common/collectives.h"
#include "tests/common/dtype_values.h"
#include "tests/common/reference.h"

namespace myriad::bench {
namespace {

size_t sendRecvCheckData(const CollArgs& a, const void* recv, uint64_t salt) {
  const int from = (a.rank - 1 + a.nranks) % a.nranks;
  return patternWrong(recv, a.counts.recvCount, test::dataTypeSize(a.type), from, 0, salt);
}

// The group is always closed, also after a failed call inside it; the first failure is returned.
myrResult_t sendRecvRun(const CollArgs& a, const void* send, void* recv, myrComm_t comm, myrStream_t stream) {
  const myrResult_t start = myrGroupStart();
  if (start != myrSuccess) return start;
  const int to = (a.rank + 1) % a.nranks, from = (a.rank - 1 + a.nranks) % a.nranks;
  myrResult_t res = myrSend(send, a.counts.count, a.type, to, comm, stream);
  if (res == myrSuccess) res = myrRecv(recv, a.counts.count, a.type, from, comm, stream);
  const myrResult_t end = myrGroupEnd();
  return res != myrSuccess ? res : end;
}

}  // namespace

const Collective kSendRecv{
    "sendrecv",  /*hasOp=*/false, /*hasRoot=*/false, /*checkInPlace=*/false,
    wholeCounts, patternInput,    sendRecvCheckData, sendRecvRun,
    unitBw,
};

}  // namespace myriad::bench
