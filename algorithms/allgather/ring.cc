// allgather.ring — n-1 steps around the ring r -> r+1: in step s rank r sends block r-s (its own in step 0,
// straight from sendbuff) and receives block r-s-1 from r-1 straight into recvbuff. Each block is cut into
// slices of MYRIAD_CHUNK_BYTES; slice k of step s is forwarded as soon as slice k of step s-1 has arrived,
// so slices stream through the ring. No scratch memory; (n-1)/n of the result crosses each link once.
#include <vector>

#include "algorithms/algorithm.h"
#include "algorithms/pieces.h"
#include "plan/dtype.h"

namespace myriad {

Schedule::Step ringAllGatherSteps(Schedule& s, const Group& g, std::span<const GatherLayer> layers, size_t es,
                                  size_t chunk, const Schedule::Deps& after) {
  std::vector<Schedule::Step> all;
  int n = g.size(), me = g.me;
  size_t slices = 0;
  for (const GatherLayer& L : layers) {
    slices = std::max(slices, slicesOf(L.blocks.maxCount(), chunk));
    BufRef own = L.buf + L.blocks.offset[static_cast<size_t>(me)] * es;
    if (L.mine.valid() && L.mine != own && L.blocks.count[static_cast<size_t>(me)])
      all.push_back(s.copy(own, L.mine, L.blocks.count[static_cast<size_t>(me)] * es, after));
  }
  // arrived[layer][slice]: the receive of the previous step, which the next step forwards.
  std::vector<std::vector<Schedule::Step>> arrived(layers.size(), std::vector<Schedule::Step>(slices, -1));
  int next = g.at(me + 1), prev = g.at(me - 1);
  for (int step = 0; step < n - 1; ++step) {
    size_t sendBlock = static_cast<size_t>(g.mod(me - step)), recvBlock = static_cast<size_t>(g.mod(me - step - 1));
    for (size_t k = 0; k < slices; ++k) {
      for (size_t l = 0; l < layers.size(); ++l) {
        const GatherLayer& L = layers[l];
        Slice out = sliceOf(L.blocks.count[sendBlock], chunk, k);
        if (out.count) {
          BufRef src = step == 0 && L.mine.valid() ? L.mine + out.begin * es
                                                   : L.buf + (L.blocks.offset[sendBlock] + out.begin) * es;
          all.push_back(s.send(next, src, out.count * es, step == 0 ? after : Schedule::Deps{arrived[l][k]}));
        }
        Slice in = sliceOf(L.blocks.count[recvBlock], chunk, k);
        if (!in.count) continue;
        arrived[l][k] = s.recv(prev, L.buf + (L.blocks.offset[recvBlock] + in.begin) * es, in.count * es, after);
        all.push_back(arrived[l][k]);
      }
    }
  }
  if (all.empty()) return s.join(after);
  return s.join(all);
}

namespace {

class RingAllGather final : public Algorithm {
 public:
  const char* name() const override { return "allgather.ring"; }
  CollKind kind() const override { return CollKind::kAllGather; }
  Status supports(const CollArgs&, const CommView&) const override { return Status::ok(); }
  Result<Schedule> plan(const CollArgs& a, const CommView& comm) const override {
    Schedule s(name());
    size_t es = dtypeSize(a.dtype);
    GatherLayer layer{Schedule::recvBuf(), Blocks::uniform(a.count, comm.nranks()), Schedule::sendBuf()};
    ringAllGatherSteps(s, Group::all(comm), {&layer, 1}, es, chunkElems(comm, es), {});
    return s;
  }
};

}  // namespace

const Algorithm& allgatherRing() {
  static const RingAllGather kAlgo;
  return kAlgo;
}

}  // namespace myriad
