// planCall: one CommView per rank over a HostLayout of ranksPerHost ranks per host, float32 elements.
#include "tools/sim/plan_call.h"

#include <algorithm>
#include <cstdint>
#include <memory>
#include <optional>
#include <unordered_map>

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

namespace {

// The call as every rank's CollArgs and CommView: float32 sums over stand-in buffers, ranksPerHost ranks per
// host; rank r's view is made by view(r).
struct Call {
  CollArgs args;
  std::shared_ptr<const HostLayout> layout;

  CommView view(int r) const {
    CommView v;
    v.rank = r;
    v.layout = layout;
    return v;
  }
};

Result<Call> callOf(const CallSpec& spec) {
  const size_t n = static_cast<size_t>(spec.nranks), es = sizeof(float);
  Call c;
  c.args.kind = spec.kind;
  c.args.dtype = myrFloat32;
  c.args.op = myrSum;
  switch (spec.kind) {
    case CollKind::kAllGather:
    case CollKind::kReduceScatter:
    case CollKind::kAllToAll: c.args.count = spec.bytes / es / n; break;
    default: c.args.count = spec.bytes / es; break;
  }
  if (c.args.count == 0)
    return invalidArgument("--bytes " + std::to_string(spec.bytes) + " leaves no float element per rank");
  // Stand-ins for the two buffers (out of place); plans compute offsets from them and never read them.
  static char sendStandIn, recvStandIn;
  c.args.sendbuff = &sendStandIn;
  c.args.recvbuff = &recvStandIn;
  std::vector<int> hostOf(n);
  for (size_t r = 0; r < n; ++r) hostOf[r] = static_cast<int>(r) / spec.ranksPerHost;
  c.layout = HostLayout::fromHostOf(hostOf);
  return c;
}

// The algorithm rank r runs, which must be rank 0's (*name, set at rank 0).
Result<const Algorithm*> algorithmOf(const CallSpec& spec, const Call& call, int r, std::string* name) {
  MYR_ASSIGN_OR_RETURN(const Algorithm* algo, selectAlgorithm(call.args, call.view(r), spec.algo));
  if (r == 0) *name = algo->name();
  if (*name != algo->name())
    return internalError("sim: rank 0 chose " + *name + " and rank " + std::to_string(r) + " chose " + algo->name());
  return algo;
}

}  // namespace

Result<std::string> planEachRank(const CallSpec& spec, const std::function<Status(int, const Schedule&)>& each) {
  MYR_ASSIGN_OR_RETURN(Call call, callOf(spec));
  std::string algorithm;
  for (int r = 0; r < spec.nranks; ++r) {
    MYR_ASSIGN_OR_RETURN(const Algorithm* algo, algorithmOf(spec, call, r, &algorithm));
    MYR_ASSIGN_OR_RETURN(Schedule s, algo->plan(call.args, call.view(r)));
    MYR_TRY(each(r, s));
  }
  return algorithm;
}

Result<PlannedCall> planCall(const CallSpec& spec, bool byClass) {
  MYR_ASSIGN_OR_RETURN(Call call, callOf(spec));
  PlannedCall out;
  const int n = spec.nranks;
  struct Class {
    int first = 0, members = 0, last = 0;
  };
  std::unordered_map<uint64_t, Class> classes;
  std::vector<int> toCheck;
  for (int r = 0; r < n; ++r) {
    MYR_ASSIGN_OR_RETURN(const Algorithm* algo, algorithmOf(spec, call, r, &out.algorithm));
    const CommView view = call.view(r);
    const std::optional<uint64_t> key = byClass ? algo->planClass(call.args, view) : std::nullopt;
    Class* c = key ? &classes[*key] : nullptr;
    if (c && c->members > 0) {
      out.plans.addMoved(c->first, n);
      ++out.moved;
      // The class's second and last member, and 8 ranks spread over the communicator, are checked.
      if (++c->members == 2 || r % std::max(1, n / 8) == 0) toCheck.push_back(r);
      c->last = r;
      continue;
    }
    MYR_ASSIGN_OR_RETURN(Schedule s, algo->plan(call.args, view));
    MYR_TRY(out.plans.add(s, n));
    ++out.planned;
    if (c) *c = Class{r, 1, r};
  }
  for (const auto& [key, c] : classes)
    if (c.members > 2) toCheck.push_back(c.last);
  std::string name = out.algorithm;
  for (int r : toCheck) {
    MYR_ASSIGN_OR_RETURN(const Algorithm* algo, algorithmOf(spec, call, r, &name));
    MYR_ASSIGN_OR_RETURN(Schedule s, algo->plan(call.args, call.view(r)));
    MYR_TRY(out.plans.check(r, s, n));
    ++out.checked;
  }
  return out;
}

}  // namespace myriad::netsim
