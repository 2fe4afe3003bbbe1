// planCall: one CommView per rank over a HostLayout of ranksPerHost ranks per host, float32 elements.
#include "tools/sim/plan_call.h"

#include <cstdint>

#include "dispatch/select.h"
#include "plan/comm_view.h"

namespace myriad::netsim {

Result<CollKind> parseCollective(const std::string& name) {
  struct Entry {
    const char *a, *b;
    CollKind kind;
  };
  static const Entry kNames[] = {{"all_reduce", "allreduce", CollKind::kAllReduce},
                                 {"all_gather", "allgather", CollKind::kAllGather},
                                 {"reduce_scatter", "reducescatter", CollKind::kReduceScatter},
                                 {"all_to_all", "alltoall", CollKind::kAllToAll},
                                 {"broadcast", "broadcast", CollKind::kBroadcast}};
  for (const Entry& e : kNames)
    if (name == e.a || name == e.b) return e.kind;
  return invalidArgument("unknown collective '" + name +
                         "': expected all_reduce, all_gather, reduce_scatter, all_to_all or broadcast");
}

double busBwFactor(CollKind kind, int nranks) {
  const double n = nranks;
  switch (kind) {
    case CollKind::kAllReduce: return 2 * (n - 1) / n;
    case CollKind::kAllGather:
    case CollKind::kReduceScatter:
    case CollKind::kAllToAll: return (n - 1) / n;
    default: return 1;
  }
}

Result<std::string> planEachRank(const CallSpec& spec, const std::function<Status(int, const Schedule&)>& each) {
  const size_t n = static_cast<size_t>(spec.nranks), es = sizeof(float);
  CollArgs args;
  args.kind = spec.kind;
  args.dtype = myrFloat32;
  args.op = myrSum;
  switch (spec.kind) {
    case CollKind::kAllGather:
    case CollKind::kReduceScatter:
    case CollKind::kAllToAll: args.count = spec.bytes / es / n; break;
    default: args.count = spec.bytes / es; break;
  }
  if (args.count == 0)
    return invalidArgument("--bytes " + std::to_string(spec.bytes) + " leaves no float element per rank");
  // Stand-ins for the two buffers (out of place); plans compute offsets from them and never read them.
  static char sendStandIn, recvStandIn;
  args.sendbuff = &sendStandIn;
  args.recvbuff = &recvStandIn;
  std::vector<int> hostOf(n);
  for (size_t r = 0; r < n; ++r) hostOf[r] = static_cast<int>(r) / spec.ranksPerHost;
  auto layout = HostLayout::fromHostOf(hostOf);
  std::string algorithm;
  for (int r = 0; r < spec.nranks; ++r) {
    CommView view;
    view.rank = r;
    view.layout = layout;
    MYR_ASSIGN_OR_RETURN(const Algorithm* algo, selectAlgorithm(args, view, spec.algo));
    if (r == 0) algorithm = algo->name();
    if (algorithm != algo->name())
      return internalError("sim: rank 0 chose " + algorithm + " and rank " + std::to_string(r) + " chose " +
                           algo->name());
    MYR_ASSIGN_OR_RETURN(Schedule s, algo->plan(args, view));
    MYR_TRY(each(r, s));
  }
  return algorithm;
}

Result<PlannedCall> planCall(const CallSpec& spec) {
  PlannedCall out;
  MYR_ASSIGN_OR_RETURN(out.algorithm,
                       planEachRank(spec, [&](int, const Schedule& s) { return out.plans.add(s, spec.nranks); }));
  return out;
}

}  // namespace myriad::netsim
