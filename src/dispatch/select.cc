// selectAlgorithm: MYRIAD_ALGO, then the tuner, then a fallback; the choice is logged under COLL.
#include "dispatch/select.h"

#include <algorithm>

#include "base/log.h"
#include "dispatch/registry.h"
#include "tuner/tuner.h"

namespace myriad {

namespace {

std::string trim(const std::string& s) {
  size_t b = s.find_first_not_of(" \t"), e = s.find_last_not_of(" \t");
  return b == std::string::npos ? "" : s.substr(b, e - b + 1);
}

// The MYRIAD_ALGO entry for this call's collective, null when there is none.
Result<const Algorithm*> forcedAlgorithm(const std::string& list, CollKind kind) {
  const Algorithm* forced = nullptr;
  size_t pos = 0;
  while (pos <= list.size()) {
    size_t comma = std::min(list.find(',', pos), list.size());
    std::string name = trim(list.substr(pos, comma - pos));
    pos = comma + 1;
    if (name.empty()) continue;
    const Algorithm* a = findAlgorithm(name);
    if (!a)
      return invalidUsage("MYRIAD_ALGO names '" + name + "', which is no algorithm; valid names: " + algorithmNames());
    if (a->kind() != kind) continue;
    if (forced && forced != a)
      return invalidUsage("MYRIAD_ALGO names two algorithms for " + std::string(collName(kind)) + ": " +
                          forced->name() + " and " + a->name());
    forced = a;
  }
  return forced;
}

}  // namespace

Result<const Algorithm*> selectAlgorithm(const CollArgs& args, const CommView& comm, const std::string& forcedList) {
  MYR_ASSIGN_OR_RETURN(const Algorithm* forced, forcedAlgorithm(forcedList, args.kind));
  if (forced) {
    Status s = forced->supports(args, comm);
    if (!s.isOk())
      return invalidUsage(std::string("MYRIAD_ALGO=") + forced->name() + " cannot run this call: " + s.message() +
                          "; valid names for " + collName(args.kind) + ": " + algorithmNames(&args.kind));
    MYR_LOG(kInfo, kColl, comm.rank, std::string(forced->name()) + " (forced by MYRIAD_ALGO)");
    return forced;
  }
  CallShape shape = shapeOf(args, comm);
  std::string choice = ruleTuner().choose(shape);
  const Algorithm* a = findAlgorithm(choice);
  Status why = a ? a->supports(args, comm) : notSupported(choice + " is not built");
  if (why.isOk()) {
    MYR_LOG(kInfo, kColl, comm.rank,
            choice + " (" + ruleTuner().name() + ": " + std::to_string(shape.bytes) + " B, " +
                std::to_string(shape.nranks) + " ranks, " + std::to_string(shape.nhosts) + " hosts)");
    return a;
  }
  for (const Algorithm* other : algorithmsFor(args.kind)) {
    if (!other->supports(args, comm).isOk()) continue;
    MYR_LOG(kInfo, kColl, comm.rank,
            std::string(other->name()) + " (fallback: " + choice + " cannot run this call: " + why.message() + ")");
    return other;
  }
  return internalError(std::string("no algorithm can run this ") + collName(args.kind) + " call");
}

}  // namespace myriad
