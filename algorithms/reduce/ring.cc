// reduce.ring — a pipelined chain towards the root: root+1 -> root+2 -> ... -> root. The first rank sends
// its input; every later rank reduces what arrives with its own input and passes it on; the root reduces
// into recvbuff (and divides for avg). Slices of MYRIAD_CHUNK_BYTES stream through the chain, staged in a
// window of kWindow scratch slots per rank: slot k mod W is refilled once the send that read it is done.
#include "algorithms/algorithm.h"
#include "algorithms/layout.h"
#include "plan/dtype.h"
#include "plan/schedule.h"

namespace myriad {
namespace {

constexpr size_t kWindow = 8;

class RingReduce final : public Algorithm {
 public:
  const char* name() const override { return "reduce.ring"; }
  CollKind kind() const override { return CollKind::kReduce; }
  Status supports(const CollArgs&, const CommView&) const override { return Status::ok(); }
  Result<Schedule> plan(const CollArgs& a, const CommView& comm) const override {
    Schedule s(name());
    int n = comm.nranks(), v = ((comm.rank - a.root - 1) % n + n) % n;  // v = n-1 is the root
    size_t es = dtypeSize(a.dtype), chunk = chunkElems(comm, es), slices = slicesOf(a.count, chunk);
    int next = (comm.rank + 1) % n, prev = (comm.rank + n - 1) % n;
    if (n == 1) {
      if (a.count && !a.inPlace()) s.copy(Schedule::recvBuf(), Schedule::sendBuf(), a.count * es);
      return s;
    }
    BufRef scratch = v == 0 ? BufRef{} : s.reserveScratch(kWindow * chunk * es);
    std::vector<Schedule::Step> freed(slices, -1);  // the step after which slice k's slot may be refilled
    for (size_t k = 0; k < slices; ++k) {
      Slice sl = sliceOf(a.count, chunk, k);
      size_t bytes = sl.count * es;
      BufRef mine = at(Schedule::sendBuf(), sl.begin, es);
      if (v == 0) {
        s.send(next, mine, bytes);
        continue;
      }
      BufRef slot = scratch + (k % kWindow) * chunk * es;
      Schedule::Deps free = k >= kWindow ? Schedule::Deps{freed[k - kWindow]} : Schedule::Deps{};
      Schedule::Step got = s.recv(prev, slot, bytes, free);
      bool root = v == n - 1;
      BufRef dst = root ? at(Schedule::recvBuf(), sl.begin, es) : slot;
      Schedule::Step red = s.reduce(dst, slot, mine, sl.count, a.dtype, a.op, {got});
      if (root && a.op == myrAvg) s.scaleAvg(dst, sl.count, a.dtype, n, {red});
      freed[k] = root ? red : s.send(next, slot, bytes, {red});
    }
    return s;
  }
};

}  // namespace

const Algorithm& reduceRing() {
  static const RingReduce kAlgo;
  return kAlgo;
}

}  // namespace myriad
