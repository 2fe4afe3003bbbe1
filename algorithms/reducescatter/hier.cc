// reducescatter.hier — two phases over the host structure:
//   1. intra-host ring reduce-scatter, one layer per destination host h: local rank l ends with the
//      host's partial of the block of rank (h, l), for every h, in scratch;
//   2. inter-host ring reduce-scatter of those partials among the ranks with local index l (the rail):
//      rank (h, l) ends with its own block reduced over all hosts, in recvbuff.
// Each block crosses the inter-host links as one partial per host instead of one per rank. Needs every
// host to have the same number of ranks (else supports() says why and reducescatter.ring runs).
#include "algorithms/algorithm.h"
#include "algorithms/pieces.h"
#include "plan/dtype.h"

namespace myriad {
namespace {

class HierReduceScatter final : public Algorithm {
 public:
  const char* name() const override { return "reducescatter.hier"; }
  CollKind kind() const override { return CollKind::kReduceScatter; }
  Status supports(const CollArgs&, const CommView& comm) const override { return evenHosts(comm); }
  Result<Schedule> plan(const CollArgs& a, const CommView& comm) const override {
    Schedule s(name());
    size_t es = dtypeSize(a.dtype), chunk = chunkElems(comm, es);
    Group local = Group::local(comm), rail = Group::rail(comm);
    size_t nhosts = static_cast<size_t>(rail.size()), partialBytes = nhosts * a.count * es;
    std::vector<ReduceLayer> intra;
    for (const auto& host : comm.hosts())
      intra.push_back(ReduceLayer{Schedule::sendBuf(), Blocks::ofRanks(host, a.count), BufRef{}});
    ReduceLayer inter{BufRef{}, Blocks::uniform(a.count, rail.size()), Schedule::recvBuf()};
    size_t ring = std::max(ringReduceScatterScratch(local, intra, es, chunk),
                           ringReduceScatterScratch(rail, {&inter, 1}, es, chunk));
    BufRef partials = s.reserveScratch(partialBytes + ring);
    for (size_t h = 0; h < nhosts; ++h) intra[h].out = partials + h * a.count * es;
    inter.in = partials;
    Schedule::Step step = ringReduceScatterSteps(s, local, intra, a.dtype, a.op, partials + partialBytes, chunk, {});
    step = ringReduceScatterSteps(s, rail, {&inter, 1}, a.dtype, a.op, partials + partialBytes, chunk, {step});
    if (a.op == myrAvg && a.count) s.scaleAvg(Schedule::recvBuf(), a.count, a.dtype, comm.nranks(), {step});
    return s;
  }
};

}  // namespace

const Algorithm& reducescatterHier() {
  static const HierReduceScatter kAlgo;
  return kAlgo;
}

}  // namespace myriad
