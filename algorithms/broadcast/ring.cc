// broadcast.ring — a pipelined chain: root -> root+1 -> ... -> root-1. The message is cut into slices of
// MYRIAD_CHUNK_BYTES; each rank forwards slice k as soon as it has arrived, so after the chain fills every
// link carries the whole message once, at the speed of the slowest link (bandwidth-optimal for large
// messages; n-1 slice latencies to fill).
#include "algorithms/algorithm.h"
#include "algorithms/layout.h"
#include "plan/dtype.h"
#include "plan/schedule.h"

namespace myriad {
namespace {

class RingBroadcast final : public Algorithm {
 public:
  const char* name() const override { return "broadcast.ring"; }
  CollKind kind() const override { return CollKind::kBroadcast; }
  Status supports(const CollArgs&, const CommView&) const override { return Status::ok(); }
  Result<Schedule> plan(const CollArgs& a, const CommView& comm) const override {
    Schedule s(name());
    int n = comm.nranks(), v = ((comm.rank - a.root) % n + n) % n;
    size_t es = dtypeSize(a.dtype), chunk = chunkElems(comm, es), bytes = a.count * es;
    int next = (comm.rank + 1) % n, prev = (comm.rank + n - 1) % n;
    if (v == 0 && bytes && !a.inPlace()) s.copy(Schedule::recvBuf(), Schedule::sendBuf(), bytes);
    for (size_t k = 0; k < slicesOf(a.count, chunk) && n > 1; ++k) {
      Slice sl = sliceOf(a.count, chunk, k);
      BufRef dst = at(Schedule::recvBuf(), sl.begin, es);
      if (v == 0) {
        s.send(next, at(Schedule::sendBuf(), sl.begin, es), sl.count * es);
        continue;
      }
      Schedule::Step got = s.recv(prev, dst, sl.count * es);
      if (v < n - 1) s.send(next, dst, sl.count * es, {got});
    }
    return s;
  }
};

}  // namespace

const Algorithm& broadcastRing() {
  static const RingBroadcast kAlgo;
  return kAlgo;
}

}  // namespace myriad
