// allgather.hier — two phases over the host structure, on hosts of any sizes (lanes and rails as in
// HostLanes, layout.h: Lmax lanes, lane j served on a host of L ranks by local rank j mod L):
//   1. for each lane j it serves, in lane order, an inter-host ring all-gather on rail j of the blocks of
//      the ranks with local index j (a host smaller than j + 1 has no such rank and adds an empty block):
//      each rank's own block crosses the inter-host links once per other host, and all rails run in
//      parallel;
//   2. intra-host ring all-gather of what phase 1 brought, one layer per (source host, wrap of that host's
//      ranks over this host's), interleaved so that the layers share the ring's pipeline.
// On even hosts that is one rail per rank and one layer per source host. Blocks land at their final place
// in recvbuff in both phases; no scratch.
#include <vector>

#include "algorithms/algorithm.h"
#include "algorithms/pieces.h"
#include "plan/dtype.h"

namespace myriad {
namespace {

class HierAllGather final : public Algorithm {
 public:
  const char* name() const override { return "allgather.hier"; }
  CollKind kind() const override { return CollKind::kAllGather; }
  Status supports(const CollArgs&, const CommView&) const override { return Status::ok(); }
  Result<Schedule> plan(const CollArgs& a, const CommView& comm) const override {
    Schedule s(name());
    size_t es = dtypeSize(a.dtype), chunk = chunkElems(comm, es);
    HostLanes lanes(comm);
    BufRef out = Schedule::recvBuf();
    std::vector<Schedule::Step> gathered;
    for (int j : lanes.served()) {
      Group rail = lanes.rail(j);
      GatherLayer layer{out, Blocks{}, Schedule::sendBuf()};
      for (int h = 0; h < lanes.hosts(); ++h) {
        bool has = j < lanes.size(h);  // host h has a rank with local index j
        layer.blocks.offset.push_back(has ? static_cast<size_t>(rail.ranks[static_cast<size_t>(h)]) * a.count : 0);
        layer.blocks.count.push_back(has ? a.count : 0);
      }
      gathered.push_back(ringAllGatherSteps(s, rail, {&layer, 1}, es, chunk, {}));
    }
    std::vector<GatherLayer> hostLayers;
    for (const auto& host : comm.hosts()) {
      Blocks perLane = Blocks::ofRanks(host, a.count);
      for (int w = 0; w < lanes.wraps(host.size()); ++w)
        hostLayers.push_back(GatherLayer{out, lanes.wrap(perLane, w), BufRef{}});
    }
    if (gathered.size() > 1) gathered = {s.join(gathered)};
    ringAllGatherSteps(s, Group::local(comm), hostLayers, es, chunk, gathered);
    return s;
  }
};

}  // namespace

const Algorithm& allgatherHier() {
  static const HierAllGather kAlgo;
  return kAlgo;
}

}  // namespace myriad
