// allgather.hier — two phases over the host structure:
//   1. inter-host ring all-gather among the ranks with this rank's local index (its rail): each rank's own
//      block crosses the inter-host links once per other host, and all rails run in parallel;
//   2. intra-host ring all-gather of what phase 1 brought, one layer per source host (interleaved, so the
//      layers share the ring's pipeline).
// Blocks land at their final place in recvbuff in both phases; no scratch. Needs every host to have the
// same number of ranks (else supports() says why and allgather.ring runs).
#include "algorithms/algorithm.h"
#include "algorithms/pieces.h"
#include "plan/dtype.h"

namespace myriad {
namespace {

class HierAllGather final : public Algorithm {
 public:
  const char* name() const override { return "allgather.hier"; }
  CollKind kind() const override { return CollKind::kAllGather; }
  Status supports(const CollArgs&, const CommView& comm) const override { return evenHosts(comm); }
  Result<Schedule> plan(const CollArgs& a, const CommView& comm) const override {
    Schedule s(name());
    size_t es = dtypeSize(a.dtype), chunk = chunkElems(comm, es);
    Group local = Group::local(comm), rail = Group::rail(comm);
    BufRef out = Schedule::recvBuf();
    GatherLayer railLayer{out, Blocks::ofRanks(rail.ranks, a.count), Schedule::sendBuf()};
    Schedule::Step step = ringAllGatherSteps(s, rail, {&railLayer, 1}, es, chunk, {});
    std::vector<GatherLayer> hostLayers;
    for (const auto& host : comm.hosts())
      hostLayers.push_back(GatherLayer{out, Blocks::ofRanks(host, a.count), BufRef{}});
    ringAllGatherSteps(s, local, hostLayers, es, chunk, {step});
    return s;
  }
};

}  // namespace

const Algorithm& allgatherHier() {
  static const HierAllGather kAlgo;
  return kAlgo;
}

}  // namespace myriad
