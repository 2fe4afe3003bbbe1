// Validation and issue of collective calls.
#include "core/collectives.h"

#include "algorithms/registry.h"
#include "core/log.h"
#include "exec/dtype.h"

namespace myriad {

Status validateCollective(const CollArgs& a, const Comm& comm) {
  std::string who = "rank " + std::to_string(comm.rank()) + ": ";
  if (!validDtype(a.dtype))
    return invalidArgument(who + "unknown datatype " + std::to_string(static_cast<int>(a.dtype)));
  if (!validOp(a.op)) return invalidArgument(who + "unknown reduction op " + std::to_string(static_cast<int>(a.op)));
  if (a.count > 0 && !a.sendbuff)
    return invalidArgument(who + "sendbuff is NULL with count " + std::to_string(a.count));
  if (a.count > 0 && !a.recvbuff)
    return invalidArgument(who + "recvbuff is NULL with count " + std::to_string(a.count));
  if (a.count > (SIZE_MAX / 2) / dtypeSize(a.dtype))
    return invalidArgument(who + "count " + std::to_string(a.count) + " is too large");
  return Status::ok();
}

namespace {
Status execute(Comm& comm, const CollArgs& args) {
  std::lock_guard<std::mutex> lock(comm.execMutex());
  MYR_TRY(comm.usable());
  MYR_ASSIGN_OR_RETURN(const Algorithm* algo, chooseAlgorithm(args, comm));
  MYR_LOG(kTrace, kColl, comm.rank(),
          std::string(algo->name()) + " count " + std::to_string(args.count) + " " + dtypeName(args.dtype) + " " +
              opName(args.op));
  auto task = algo->plan(args, comm);
  if (!task.isOk()) return comm.fail(task.takeStatus().addContext(algo->name()));
  return comm.run(*task.value()).addContext(algo->name());
}
}  // namespace

Status issueCollective(Comm& comm, const CollArgs& args, HostStream* stream) {
  MYR_TRY(validateCollective(args, comm));
  MYR_TRY(comm.usable());
  if (!stream) return execute(comm, args);
  comm.addPending(1);
  stream->enqueue([&comm, args] {
    Status s = execute(comm, args);
    comm.addPending(-1);
    return s;
  });
  return Status::ok();
}

}  // namespace myriad
