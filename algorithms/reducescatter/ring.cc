// reducescatter.ring — n-1 steps around the ring r -> r+1: in step s rank r sends its partial of block
// r-s-1 (its own input in step 0) and receives the partial of block r-s-2 from r-1, which it reduces with
// its own input block; in the last step that block is r's own, and the reduction lands in recvbuff.
// Blocks are cut into slices of MYRIAD_CHUNK_BYTES and slice k moves on as soon as it is reduced. Partials
// live in two scratch buffers (even and odd steps): a slot is refilled once the last send that read it is
// done. Scratch is capped (16 MiB); larger blocks run as several passes over the slices. Where the connection
// combines on arrival (shm), a partial is reduced straight out of the transport's buffer (Schedule::recvReduce).
#include <vector>

#include "algorithms/algorithm.h"
#include "algorithms/pieces.h"
#include "plan/dtype.h"

namespace myriad {
namespace {

constexpr size_t kScratchCap = size_t{16} << 20;

size_t maxSlices(std::span<const ReduceLayer> layers, size_t chunk) {
  size_t slices = 0;
  for (const ReduceLayer& L : layers) slices = std::max(slices, slicesOf(L.blocks.maxCount(), chunk));
  return slices;
}

// Slices per pass: as many as the scratch cap allows, at least one.
size_t passSlices(std::span<const ReduceLayer> layers, size_t es, size_t chunk, size_t slices) {
  size_t perSlice = 2 * layers.size() * chunk * es;
  return std::clamp<size_t>(kScratchCap / perSlice, 1, std::max<size_t>(slices, 1));
}

}  // namespace

size_t ringReduceScatterScratch(const Group& g, std::span<const ReduceLayer> layers, size_t es, size_t chunk) {
  size_t slices = maxSlices(layers, chunk);
  if (g.size() == 1 || slices == 0) return 0;
  return 2 * layers.size() * passSlices(layers, es, chunk, slices) * chunk * es;
}

Schedule::Step ringReduceScatterSteps(Schedule& s, const Group& g, std::span<const ReduceLayer> layers,
                                      myrDataType_t dtype, myrRedOp_t op, BufRef scratch, size_t chunk,
                                      const Schedule::Deps& after) {
  size_t es = dtypeSize(dtype);
  int n = g.size(), me = g.me;
  size_t self = static_cast<size_t>(me);
  std::vector<Schedule::Step> all;
  if (n == 1) {
    for (const ReduceLayer& L : layers) {
      BufRef mine = L.in + L.blocks.offset[self] * es;
      if (L.blocks.count[self] && mine != L.out) all.push_back(s.copy(L.out, mine, L.blocks.count[self] * es, after));
    }
    return s.join(all.empty() ? after : all);
  }
  size_t slices = maxSlices(layers, chunk), pass = passSlices(layers, es, chunk, slices), nl = layers.size();
  auto slot = [&](int parity, size_t l, size_t kk) {
    return scratch + ((static_cast<size_t>(parity) * nl + l) * pass + kk) * chunk * es;
  };
  int next = g.at(me + 1), prev = g.at(me - 1);
  Schedule::Deps passDeps = after;
  for (size_t p0 = 0; p0 < slices; p0 += pass) {
    size_t width = std::min(pass, slices - p0);
    // Per (layer, slice of the pass): the previous step's reduce, and per parity the last send that read
    // that slot (-1: none yet in this pass), which a receive into the slot must wait for.
    std::vector<Schedule::Step> reduced(nl * width, -1);
    std::vector<Schedule::Step> reader[2] = {std::vector<Schedule::Step>(nl * width, -1),
                                             std::vector<Schedule::Step>(nl * width, -1)};
    std::vector<Schedule::Step> passSteps;
    for (int step = 0; step < n - 1; ++step) {
      size_t sendBlock = static_cast<size_t>(g.mod(me - step - 1)),
             recvBlock = static_cast<size_t>(g.mod(me - step - 2));
      bool last = step == n - 2;
      for (size_t kk = 0; kk < width; ++kk) {
        for (size_t l = 0; l < nl; ++l) {
          const ReduceLayer& L = layers[l];
          size_t i = l * width + kk;
          Slice out = sliceOf(L.blocks.count[sendBlock], chunk, p0 + kk);
          if (out.count) {
            BufRef src = step == 0 ? L.in + (L.blocks.offset[sendBlock] + out.begin) * es : slot((step - 1) % 2, l, kk);
            Schedule::Step sent = s.send(next, src, out.count * es, step == 0 ? after : Schedule::Deps{reduced[i]});
            if (step > 0) reader[(step - 1) % 2][i] = sent;
            passSteps.push_back(sent);
          }
          Slice in = sliceOf(L.blocks.count[recvBlock], chunk, p0 + kk);
          if (!in.count) continue;
          BufRef buf = slot(step % 2, l, kk);
          Schedule::Step prior = reader[step % 2][i];
          BufRef dst = last ? L.out + in.begin * es : buf;
          reduced[i] = s.recvReduce(prev, dst, L.in + (L.blocks.offset[recvBlock] + in.begin) * es, buf, in.count,
                                    dtype, op, prior >= 0 ? Schedule::Deps{prior} : passDeps);
          passSteps.push_back(reduced[i]);
        }
      }
    }
    passDeps = {s.join(passSteps.empty() ? passDeps : passSteps)};
    all.push_back(passDeps[0]);
  }
  return s.join(all.empty() ? after : all);
}

namespace {

class RingReduceScatter final : public Algorithm {
 public:
  const char* name() const override { return "reducescatter.ring"; }
  CollKind kind() const override { return CollKind::kReduceScatter; }
  Status supports(const CollArgs&, const CommView&) const override { return Status::ok(); }
  Result<Schedule> plan(const CollArgs& a, const CommView& comm) const override {
    Schedule s(name());
    size_t es = dtypeSize(a.dtype), chunk = chunkElems(comm, es);
    Group g = Group::all(comm);
    ReduceLayer layer{Schedule::sendBuf(), Blocks::uniform(a.count, comm.nranks()), Schedule::recvBuf()};
    BufRef scratch = s.reserveScratch(ringReduceScatterScratch(g, {&layer, 1}, es, chunk));
    Schedule::Step done = ringReduceScatterSteps(s, g, {&layer, 1}, a.dtype, a.op, scratch, chunk, {});
    if (a.op == myrAvg && a.count) s.scaleAvg(Schedule::recvBuf(), a.count, a.dtype, comm.nranks(), {done});
    return s;
  }
};

}  // namespace

const Algorithm& reducescatterRing() {
  static const RingReduceScatter kAlgo;
  return kAlgo;
}

}  // namespace myriad
