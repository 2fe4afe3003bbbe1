// reducescatter.hier — two phases over the host structure, on hosts of any sizes (lanes and rails as in
// HostLanes, layout.h: Lmax lanes, lane j served on a host of L ranks by local rank j mod L):
//   1. intra-host ring reduce-scatter, one layer per (destination host dh, wrap of dh's ranks over this
//      host's): the rank serving lane j ends with its host's partial of the block of rank (dh, j), for
//      every host dh that has a rank with local index j, in scratch;
//   2. for each lane j it serves, in lane order, an inter-host ring reduce-scatter of those partials on
//      rail j (a host without a rank of local index j has an empty block): rank (h, j) ends with its own
//      block reduced over all hosts, in recvbuff.
// Each block crosses the inter-host links as one partial per host instead of one per rank. On even hosts
// that is one layer per destination host and one rail per rank. Scratch: the partials of the lanes this
// rank serves, then the rings' scratch (each rail its own, so that a rank's rails run side by side).
#include <cstring>
#include <utility>
#include <vector>

#include "algorithms/algorithm.h"
#include "algorithms/pieces.h"
#include "plan/dtype.h"

namespace myriad {
namespace {

class HierReduceScatter final : public Algorithm {
 public:
  const char* name() const override { return "reducescatter.hier"; }
  CollKind kind() const override { return CollKind::kReduceScatter; }
  Status supports(const CollArgs&, const CommView&) const override { return Status::ok(); }
  Result<Schedule> plan(const CollArgs& a, const CommView& comm) const override {
    Schedule s(name());
    size_t es = dtypeSize(a.dtype), chunk = chunkElems(comm, es);
    HostLanes lanes(comm);
    Group local = Group::local(comm);
    std::vector<int> served = lanes.served();
    // Rail layers, one per lane served (the k-th lane served is laneIn(k)): member h's input is the partial
    // of rank (h, j), the partials of a lane packed in host order at partialAt[k] elements into the scratch.
    std::vector<ReduceLayer> inter;
    std::vector<Group> rails;
    std::vector<size_t> partialAt;
    size_t partialElems = 0;
    for (int j : served) {
      rails.push_back(lanes.rail(j));
      Blocks perHost;
      for (int h = 0, at = 0; h < lanes.hosts(); ++h) {
        bool has = j < lanes.size(h);
        perHost.offset.push_back(has ? static_cast<size_t>(at++) * a.count : 0);
        perHost.count.push_back(has ? a.count : 0);
      }
      partialAt.push_back(partialElems);
      for (size_t c : perHost.count) partialElems += c;
      inter.push_back(ReduceLayer{BufRef{}, perHost, Schedule::recvBuf()});
    }
    // Host layers, per (destination host dh, wrap w): this rank's block is the partial of rank
    // (dh, laneIn(w)), the input of its rail laneIn(w) (absent, and an empty block, when dh has no such rank).
    std::vector<ReduceLayer> intra;
    std::vector<std::pair<size_t, size_t>> intraOut;  // per layer: (w, also its rail's index in served; dh)
    for (size_t dh = 0; dh < comm.hosts().size(); ++dh) {
      const auto& host = comm.hosts()[dh];
      Blocks perLane = Blocks::ofRanks(host, a.count);
      for (int w = 0; w < lanes.wraps(host.size()); ++w) {
        intra.push_back(ReduceLayer{Schedule::sendBuf(), lanes.wrap(perLane, w), BufRef{}});
        intraOut.emplace_back(static_cast<size_t>(w), dh);
      }
    }
    size_t railScratch = 0;
    std::vector<size_t> railAt;
    for (size_t k = 0; k < served.size(); ++k) {
      railAt.push_back(railScratch);
      railScratch += ringReduceScatterScratch(rails[k], {&inter[k], 1}, es, chunk);
    }
    size_t partialBytes = partialElems * es;
    BufRef partials =
        s.reserveScratch(partialBytes + std::max(ringReduceScatterScratch(local, intra, es, chunk), railScratch));
    BufRef ring = partials + partialBytes;
    for (size_t k = 0; k < served.size(); ++k) inter[k].in = partials + partialAt[k] * es;
    for (size_t i = 0; i < intra.size(); ++i) {
      auto [k, dh] = intraOut[i];
      if (k < served.size() && served[k] < lanes.size(static_cast<int>(dh)))
        intra[i].out = partials + (partialAt[k] + inter[k].blocks.offset[dh]) * es;
    }
    Schedule::Step step = ringReduceScatterSteps(s, local, intra, a.dtype, a.op, ring, chunk, {});
    std::vector<Schedule::Step> done;
    for (size_t k = 0; k < served.size(); ++k)
      done.push_back(
          ringReduceScatterSteps(s, rails[k], {&inter[k], 1}, a.dtype, a.op, ring + railAt[k], chunk, {step}));
    if (a.op == myrAvg && a.count) s.scaleAvg(Schedule::recvBuf(), a.count, a.dtype, comm.nranks(), done);
    return s;
  }
};

}  // namespace

const Algorithm& reducescatterHier() {
  static const HierReduceScatter kAlgo;
  return kAlgo;
}

}  // namespace myriad
