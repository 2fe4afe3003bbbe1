// The part of myrCommSplit and myrCommShrink that is the same: the checks before either touches the parent,
// and the bootstrap of the new communicator through the parent's store under keys of its own, with the
// parent's secret. No new rendezvous server and no out-of-band id are needed.
#include "base/log.h"
#include "capi/handles.h"
#include "dispatch/group.h"

namespace myriad::capi {

Result<Comm*> startChild(myrComm_t comm, myrComm_t* newcomm, const char* function) {
  if (!newcomm) return invalidArgument("newcomm (the output pointer) is NULL");
  *newcomm = nullptr;
  MYR_ASSIGN_OR_RETURN(Comm * parent, ready(comm));
  if (groupActive()) return invalidUsage(std::string(function) + " cannot be called inside a group");
  return parent;
}

Status initChild(Comm& parent, const std::string& prefix, const std::string& tagSuffix, int nranks, int newRank,
                 const Config& config, const myrConfig_t* userConfig, myrComm_t* newcomm, bool endWithParent) {
  MYR_LOG(kInfo, kInit, parent.rank(),
          "new communicator (keys " + prefix + "*) of " + std::to_string(nranks) + " ranks; this one is rank " +
              std::to_string(newRank));
  bool blocking = !userConfig || userConfig->blocking != 0;
  // Blocking, the parent outlives the child's rendezvous: a death it hears (its liveness channel) ends the
  // child's waits at once instead of at the init deadline. Not for a shrink, whose parent has failed.
  auto store = std::make_shared<PrefixStore>(parent.store(), prefix,
                                             blocking && endWithParent ? parent.errors().flag() : nullptr);
  return initComm(newcomm, nranks, newRank, parent.secret(), parent.commTag() + tagSuffix, std::move(store), config,
                  blocking);
}

}  // namespace myriad::capi
