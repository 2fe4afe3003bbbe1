// allreduce.hier — three phases over the host structure (ranks grouped by MYRIAD_HOST_ID / host identity):
//   1. intra-host ring reduce-scatter: the vector is cut into L blocks (L ranks per host) and local rank l
//      ends with block l reduced over its host, in place in recvbuff;
//   2. inter-host ring all-reduce of block l among the ranks with local index l on every host (a "rail");
//   3. intra-host ring all-gather of the L blocks.
// Only 1/L of the vector crosses the slow inter-host links per rank, and every rail runs in parallel.
// Needs every host to have the same number of ranks; otherwise supports() says why and the tuner falls
// back to a flat algorithm. The phases are joined (each starts when the previous one is done).
#include "algorithms/algorithm.h"
#include "algorithms/pieces.h"
#include "plan/dtype.h"

namespace myriad {
namespace {

class HierAllReduce final : public Algorithm {
 public:
  const char* name() const override { return "allreduce.hier"; }
  CollKind kind() const override { return CollKind::kAllReduce; }
  Status supports(const CollArgs&, const CommView& comm) const override { return evenHosts(comm); }
  Result<Schedule> plan(const CollArgs& a, const CommView& comm) const override {
    Schedule s(name());
    size_t es = dtypeSize(a.dtype), chunk = chunkElems(comm, es);
    Group local = Group::local(comm), rail = Group::rail(comm);
    BufRef out = Schedule::recvBuf();
    Blocks perLocal = Blocks::even(a.count, local.size());
    size_t mine = static_cast<size_t>(local.me);
    BufRef region = out + perLocal.offset[mine] * es;
    size_t regionCount = perLocal.count[mine];
    Blocks perHost = Blocks::even(regionCount, rail.size());
    ReduceLayer intra{Schedule::sendBuf(), perLocal, region};
    ReduceLayer inter{region, perHost, region + perHost.offset[static_cast<size_t>(rail.me)] * es};
    BufRef scratch = s.reserveScratch(std::max(ringReduceScatterScratch(local, {&intra, 1}, es, chunk),
                                               ringReduceScatterScratch(rail, {&inter, 1}, es, chunk)));
    Schedule::Step step = ringReduceScatterSteps(s, local, {&intra, 1}, a.dtype, a.op, scratch, chunk, {});
    step = ringReduceScatterSteps(s, rail, {&inter, 1}, a.dtype, a.op, scratch, chunk, {step});
    GatherLayer railGather{region, perHost, BufRef{}};
    step = ringAllGatherSteps(s, rail, {&railGather, 1}, es, chunk, {step});
    if (a.op == myrAvg && regionCount) step = s.scaleAvg(region, regionCount, a.dtype, comm.nranks(), {step});
    GatherLayer hostGather{out, perLocal, BufRef{}};
    ringAllGatherSteps(s, local, {&hostGather, 1}, es, chunk, {step});
    return s;
  }
};

}  // namespace

const Algorithm& allreduceHier() {
  static const HierAllReduce kAlgo;
  return kAlgo;
}

}  // namespace myriad
