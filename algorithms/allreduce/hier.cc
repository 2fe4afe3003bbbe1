// allreduce.hier — three phases over the host structure (ranks grouped by MYRIAD_HOST_ID / host identity),
// on hosts of any sizes. The vector is cut into Lmax lane blocks (Lmax: the largest host's number of ranks;
// lanes and rails as in HostLanes, layout.h):
//   1. intra-host ring reduce-scatter: local rank i ends with every lane block j with j mod L = i reduced
//      over its host (L: its host's size), in place in recvbuff; one ring layer per wrap of the lanes over
//      the host (a single layer on even hosts);
//   2. for each lane it serves, in lane order, an inter-host ring all-reduce (reduce-scatter, then
//      all-gather) of that lane block among the lane's rail, one rank per host;
//   3. intra-host ring all-gather of the lane blocks (layers as in phase 1).
// Only 1/L of the vector crosses the slow inter-host links per rank, and every rail runs in parallel. On
// even hosts lane j is local rank j and this is the classic schedule; on a smaller host a rank carries the
// rails of several lanes, as its host has fewer ranks to share the inter-host traffic (the host's share is
// the same: one partial of the whole vector). Lane blocks rather than a split per host size keep the rails
// aligned: rail j's members all hold exactly lane block j. Each rail's pieces have their own scratch, so
// the lanes of one rank run side by side; the phases are joined (each starts when the previous is done).
#include <vector>

#include "algorithms/algorithm.h"
#include "algorithms/pieces.h"
#include "plan/dtype.h"

namespace myriad {
namespace {

class HierAllReduce final : public Algorithm {
 public:
  const char* name() const override { return "allreduce.hier"; }
  CollKind kind() const override { return CollKind::kAllReduce; }
  Status supports(const CollArgs&, const CommView&) const override { return Status::ok(); }
  // On hosts of G ranks numbered host by host, local rank l of every host runs the same intra-host rings and
  // rail l's ring one host further: its class is l, when rail l's block splits evenly over the hosts (else
  // the hosts' blocks differ in size by position in the rail).
  std::optional<uint64_t> planClass(const CollArgs& a, const CommView& comm) const override {
    const int g = comm.layout->evenHostSize;
    if (g == 0) return std::nullopt;
    const size_t hosts = static_cast<size_t>(comm.nranks() / g);
    const int l = comm.localIndex(comm.rank);
    if (Blocks::even(a.count, g).count[static_cast<size_t>(l)] % hosts != 0) return std::nullopt;
    return static_cast<uint64_t>(l);
  }
  Result<Schedule> plan(const CollArgs& a, const CommView& comm) const override {
    Schedule s(name());
    size_t es = dtypeSize(a.dtype), chunk = chunkElems(comm, es);
    HostLanes lanes(comm);
    Group local = Group::local(comm);
    BufRef out = Schedule::recvBuf();
    Blocks perLane = Blocks::even(a.count, lanes.lanes());
    std::vector<ReduceLayer> intra;
    std::vector<GatherLayer> hostGather;
    for (int w = 0; w < lanes.wraps(perLane.size()); ++w) {
      int lane = lanes.laneIn(w);
      BufRef mine = out + (lane < lanes.lanes() ? perLane.offset[static_cast<size_t>(lane)] : 0) * es;
      intra.push_back(ReduceLayer{Schedule::sendBuf(), lanes.wrap(perLane, w), mine});
      hostGather.push_back(GatherLayer{out, intra.back().blocks, BufRef{}});
    }
    // Per lane served: its rail, its block of recvbuff and its reduce-scatter layer over the rail.
    struct Rail {
      Group group;
      BufRef region;
      size_t count;
      ReduceLayer layer;
      size_t scratch;  // offset of its reduce-scatter's scratch
    };
    std::vector<Rail> rails;
    size_t railScratch = 0;
    for (int j : lanes.served()) {
      Group g = lanes.rail(j);
      BufRef region = out + perLane.offset[static_cast<size_t>(j)] * es;
      size_t count = perLane.count[static_cast<size_t>(j)];
      Blocks perHost = Blocks::even(count, g.size());
      ReduceLayer layer{region, perHost, region + perHost.offset[static_cast<size_t>(g.me)] * es};
      rails.push_back(Rail{std::move(g), region, count, layer, railScratch});
      railScratch += ringReduceScatterScratch(rails.back().group, {&rails.back().layer, 1}, es, chunk);
    }
    BufRef scratch = s.reserveScratch(std::max(ringReduceScatterScratch(local, intra, es, chunk), railScratch));
    Schedule::Step step = ringReduceScatterSteps(s, local, intra, a.dtype, a.op, scratch, chunk, {});
    // All the rails' reduce-scatters before any all-gather: messages to one peer leave in the order they
    // were added, and two ranks may share several rails.
    std::vector<Schedule::Step> reduced, done;
    for (Rail& r : rails)
      reduced.push_back(
          ringReduceScatterSteps(s, r.group, {&r.layer, 1}, a.dtype, a.op, scratch + r.scratch, chunk, {step}));
    for (size_t k = 0; k < rails.size(); ++k) {
      Rail& r = rails[k];
      GatherLayer railGather{r.region, r.layer.blocks, BufRef{}};
      Schedule::Step got = ringAllGatherSteps(s, r.group, {&railGather, 1}, es, chunk, {reduced[k]});
      if (a.op == myrAvg && r.count) got = s.scaleAvg(r.region, r.count, a.dtype, comm.nranks(), {got});
      done.push_back(got);
    }
    if (done.size() > 1) done = {s.join(done)};
    ringAllGatherSteps(s, local, hostGather, es, chunk, done);
    return s;
  }
};

}  // namespace

const Algorithm& allreduceHier() {
  static const HierAllReduce kAlgo;
  return kAlgo;
}

}  // namespace myriad
