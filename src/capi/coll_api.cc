// C API: host streams, collectives, point-to-point calls and groups. Each function converts its arguments
// into CollArgs, issues them (dispatch/collectives.h) and records the result through finish().
#include <mutex>
#include <unordered_set>

#include "capi/handles.h"
#include "dispatch/collectives.h"
#include "dispatch/group.h"
#include "plan/dtype.h"

namespace myriad::capi {
namespace {

// The host streams that exist: any other non-null myrStream_t is the caller's device stream (a cudaStream_t),
// which only a call on device memory may take.
std::mutex gStreamsMu;
std::unordered_set<const myrStream*> gHostStreams;

bool isHostStream(const myrStream* s) {
  std::lock_guard<std::mutex> lock(gStreamsMu);
  return gHostStreams.count(s) != 0;
}

CallStream callStream(myrStream_t s) {
  if (!s) return {};
  if (isHostStream(s)) return {&s->host, nullptr};
  return {nullptr, s};
}

CollArgs args(CollKind kind, const void* sendbuff, void* recvbuff, size_t count, myrDataType_t dtype,
              myrRedOp_t op = myrSum, int root = 0) {
  CollArgs a;
  a.kind = kind;
  a.sendbuff = sendbuff;
  a.recvbuff = recvbuff;
  a.count = count;
  a.dtype = dtype;
  a.op = op;
  a.root = root;
  return a;
}

// The caller's datatype and op, checked as the ints a C caller may pass before any CollArgs holds them: a
// value outside an enum's range stored in (and loaded from) an enum-typed C++ object is undefined behaviour
// (UBSan's -fsanitize=enum reports it). The messages are those of validateCollective.
Status checkTypes(const Comm& c, int dtype, int op) {
  if (!validDtype(dtype))
    return invalidArgument("rank " + std::to_string(c.rank()) + ": unknown datatype " + std::to_string(dtype));
  if (!validOp(op))
    return invalidArgument("rank " + std::to_string(c.rank()) + ": unknown reduction op " + std::to_string(op));
  return Status::ok();
}

// One collective call: the communicator, the types, then dispatch (which validates the rest).
Status issue(myrComm_t comm, CollKind kind, const void* sendbuff, void* recvbuff, size_t count, int dtype, int op,
             int root, myrStream_t stream) {
  MYR_ASSIGN_OR_RETURN(Comm * c, ready(comm));
  MYR_TRY(checkTypes(*c, dtype, op));
  CollArgs a =
      args(kind, sendbuff, recvbuff, count, static_cast<myrDataType_t>(dtype), static_cast<myrRedOp_t>(op), root);
  return issueCollective(*c, std::move(a), callStream(stream));
}

Status allToAllv(const void* sendbuff, const size_t sendcounts[], const size_t sdispls[], void* recvbuff,
                 const size_t recvcounts[], const size_t rdispls[], int dtype, myrComm_t comm, myrStream_t stream) {
  MYR_ASSIGN_OR_RETURN(Comm * c, ready(comm));
  MYR_TRY(checkTypes(*c, dtype, myrSum));
  if (!sendcounts || !sdispls || !recvcounts || !rdispls)
    return invalidArgument("alltoallv: sendcounts, sdispls, recvcounts and rdispls must not be NULL");
  CollArgs a = args(CollKind::kAllToAll, sendbuff, recvbuff, 0, static_cast<myrDataType_t>(dtype));
  size_t n = static_cast<size_t>(c->nranks());
  a.sendCounts.assign(sendcounts, sendcounts + n);
  a.sendDispls.assign(sdispls, sdispls + n);
  a.recvCounts.assign(recvcounts, recvcounts + n);
  a.recvDispls.assign(rdispls, rdispls + n);
  return issueCollective(*c, std::move(a), callStream(stream));
}

Status pointToPoint(bool send, const void* buf, size_t count, int dtype, int peer, myrComm_t comm, myrStream_t stream) {
  MYR_ASSIGN_OR_RETURN(Comm * c, ready(comm));
  MYR_TRY(checkTypes(*c, dtype, myrSum));
  const auto type = static_cast<myrDataType_t>(dtype);
  CollArgs a = args(CollKind::kSendRecv, send ? buf : nullptr, send ? nullptr : const_cast<void*>(buf), count, type);
  a.p2p.push_back(P2pCall{send, peer, const_cast<void*>(buf), count * dtypeSize(type)});
  return issueCollective(*c, std::move(a), callStream(stream));
}

}  // namespace
}  // namespace myriad::capi

using myriad::CollKind;
using myriad::capi::CallScope;
using myriad::capi::finish;
using myriad::capi::issue;

extern "C" {

myrResult_t myrStreamCreate(myrStream_t* stream) {
  if (!stream) return finish(nullptr, myriad::invalidArgument("stream is NULL"), __func__);
  *stream = new myrStream();
  std::lock_guard<std::mutex> lock(myriad::capi::gStreamsMu);
  myriad::capi::gHostStreams.insert(*stream);
  return myrSuccess;
}

myrResult_t myrStreamSynchronize(myrStream_t stream) {
  if (!stream) return finish(nullptr, myriad::invalidArgument("stream is NULL"), __func__);
  if (!myriad::capi::isHostStream(stream))
    return finish(nullptr, myriad::invalidArgument("not a host stream of myrStreamCreate (a device stream?)"),
                  __func__);
  return finish(nullptr, stream->host.synchronize(), __func__);
}

myrResult_t myrStreamDestroy(myrStream_t stream) {
  if (!stream) return finish(nullptr, myriad::invalidArgument("stream is NULL"), __func__);
  {
    std::lock_guard<std::mutex> lock(myriad::capi::gStreamsMu);
    if (!myriad::capi::gHostStreams.erase(stream))
      return finish(nullptr, myriad::invalidArgument("not a host stream of myrStreamCreate (destroyed twice?)"),
                    __func__);
  }
  delete stream;  // runs what is queued, then stops the worker
  return myrSuccess;
}

myrResult_t myrAllReduce(const void* sendbuff, void* recvbuff, size_t count, myrDataType_t datatype, myrRedOp_t op,
                         myrComm_t comm, myrStream_t stream) {
  const CallScope scope(comm);
  return finish(comm, issue(comm, CollKind::kAllReduce, sendbuff, recvbuff, count, datatype, op, 0, stream), __func__);
}

myrResult_t myrBroadcast(const void* sendbuff, void* recvbuff, size_t count, myrDataType_t datatype, int root,
                         myrComm_t comm, myrStream_t stream) {
  const CallScope scope(comm);
  return finish(comm, issue(comm, CollKind::kBroadcast, sendbuff, recvbuff, count, datatype, myrSum, root, stream),
                __func__);
}

myrResult_t myrReduce(const void* sendbuff, void* recvbuff, size_t count, myrDataType_t datatype, myrRedOp_t op,
                      int root, myrComm_t comm, myrStream_t stream) {
  const CallScope scope(comm);
  return finish(comm, issue(comm, CollKind::kReduce, sendbuff, recvbuff, count, datatype, op, root, stream), __func__);
}

myrResult_t myrAllGather(const void* sendbuff, void* recvbuff, size_t sendcount, myrDataType_t datatype, myrComm_t comm,
                         myrStream_t stream) {
  const CallScope scope(comm);
  return finish(comm, issue(comm, CollKind::kAllGather, sendbuff, recvbuff, sendcount, datatype, myrSum, 0, stream),
                __func__);
}

myrResult_t myrReduceScatter(const void* sendbuff, void* recvbuff, size_t recvcount, myrDataType_t datatype,
                             myrRedOp_t op, myrComm_t comm, myrStream_t stream) {
  const CallScope scope(comm);
  return finish(comm, issue(comm, CollKind::kReduceScatter, sendbuff, recvbuff, recvcount, datatype, op, 0, stream),
                __func__);
}

myrResult_t myrAllToAll(const void* sendbuff, void* recvbuff, size_t count, myrDataType_t datatype, myrComm_t comm,
                        myrStream_t stream) {
  const CallScope scope(comm);
  return finish(comm, issue(comm, CollKind::kAllToAll, sendbuff, recvbuff, count, datatype, myrSum, 0, stream),
                __func__);
}

myrResult_t myrAllToAllv(const void* sendbuff, const size_t sendcounts[], const size_t sdispls[], void* recvbuff,
                         const size_t recvcounts[], const size_t rdispls[], myrDataType_t datatype, myrComm_t comm,
                         myrStream_t stream) {
  const CallScope scope(comm);
  return finish(
      comm,
      myriad::capi::allToAllv(sendbuff, sendcounts, sdispls, recvbuff, recvcounts, rdispls, datatype, comm, stream),
      __func__);
}

myrResult_t myrGather(const void* sendbuff, void* recvbuff, size_t count, myrDataType_t datatype, int root,
                      myrComm_t comm, myrStream_t stream) {
  const CallScope scope(comm);
  return finish(comm, issue(comm, CollKind::kGather, sendbuff, recvbuff, count, datatype, myrSum, root, stream),
                __func__);
}

myrResult_t myrScatter(const void* sendbuff, void* recvbuff, size_t count, myrDataType_t datatype, int root,
                       myrComm_t comm, myrStream_t stream) {
  const CallScope scope(comm);
  return finish(comm, issue(comm, CollKind::kScatter, sendbuff, recvbuff, count, datatype, myrSum, root, stream),
                __func__);
}

myrResult_t myrSend(const void* sendbuff, size_t count, myrDataType_t datatype, int peer, myrComm_t comm,
                    myrStream_t stream) {
  const CallScope scope(comm);
  return finish(comm, myriad::capi::pointToPoint(true, sendbuff, count, datatype, peer, comm, stream), __func__);
}

myrResult_t myrRecv(void* recvbuff, size_t count, myrDataType_t datatype, int peer, myrComm_t comm,
                    myrStream_t stream) {
  const CallScope scope(comm);
  return finish(comm, myriad::capi::pointToPoint(false, recvbuff, count, datatype, peer, comm, stream), __func__);
}

myrResult_t myrBarrier(myrComm_t comm, myrStream_t stream) {
  const CallScope scope(comm);
  return finish(comm, issue(comm, CollKind::kBarrier, nullptr, nullptr, 0, myrUint8, myrSum, 0, stream), __func__);
}

myrResult_t myrGroupStart(void) {
  myriad::groupStart();
  return myrSuccess;
}

myrResult_t myrGroupEnd(void) {
  return finish(nullptr, myriad::groupEnd(), __func__);
}

}  // extern "C"
