// CollKind names: the prefix of every algorithm's registry name ("allreduce" in "allreduce.ring").
#include "plan/coll_args.h"

namespace myriad {

const char* collName(CollKind kind) {
  switch (kind) {
    case CollKind::kAllReduce: return "allreduce";
    case CollKind::kBroadcast: return "broadcast";
    case CollKind::kReduce: return "reduce";
    case CollKind::kAllGather: return "allgather";
    case CollKind::kReduceScatter: return "reducescatter";
    case CollKind::kAllToAll: return "alltoall";
    case CollKind::kGather: return "gather";
    case CollKind::kScatter: return "scatter";
    case CollKind::kBarrier: return "barrier";
    case CollKind::kSendRecv: return "sendrecv";
  }
  return "?";
}

}  // namespace myriad
