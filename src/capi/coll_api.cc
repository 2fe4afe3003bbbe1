// C API: host streams and collectives. Each function validates, converts and records through finish().
#include "capi/handles.h"
#include "core/collectives.h"

namespace myriad::capi {
namespace {

Status allReduce(const void* sendbuff, void* recvbuff, size_t count, myrDataType_t dtype, myrRedOp_t op, myrComm_t comm,
                 myrStream_t stream) {
  MYR_ASSIGN_OR_RETURN(Comm * c, ready(comm));
  CollArgs args;
  args.kind = CollKind::kAllReduce;
  args.sendbuff = sendbuff;
  args.recvbuff = recvbuff;
  args.count = count;
  args.dtype = dtype;
  args.op = op;
  return issueCollective(*c, args, stream ? &stream->host : nullptr);
}

}  // namespace
}  // namespace myriad::capi

using myriad::capi::finish;

extern "C" {

myrResult_t myrStreamCreate(myrStream_t* stream) {
  if (!stream) return finish(nullptr, myriad::invalidArgument("stream is NULL"), __func__);
  *stream = new myrStream();
  return myrSuccess;
}

myrResult_t myrStreamSynchronize(myrStream_t stream) {
  if (!stream) return finish(nullptr, myriad::invalidArgument("stream is NULL"), __func__);
  return finish(nullptr, stream->host.synchronize(), __func__);
}

myrResult_t myrStreamDestroy(myrStream_t stream) {
  if (!stream) return finish(nullptr, myriad::invalidArgument("stream is NULL"), __func__);
  delete stream;  // runs what is queued, then stops the worker
  return myrSuccess;
}

myrResult_t myrAllReduce(const void* sendbuff, void* recvbuff, size_t count, myrDataType_t datatype, myrRedOp_t op,
                         myrComm_t comm, myrStream_t stream) {
  return finish(comm, myriad::capi::allReduce(sendbuff, recvbuff, count, datatype, op, comm, stream), __func__);
}

}  // extern "C"
