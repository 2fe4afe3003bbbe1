// allreduce.ring — reduce-scatter then all-gather around the ring r -> r+1, pipelined in slices.
// The buffer is cut into n segments; segment q is cut into S slices of MYRIAD_CHUNK_BYTES. Step s of the
// reduce-scatter (s < n-1) sends segment r-s and receives segment r-s-1, which is reduced into the result
// (recv = received op own input); after it, rank r holds the final segment r+1 (divided by n for avg).
// Step s of the all-gather sends segment r+1-s and receives segment r-s straight into the result. Each
// (step, slice) is one message, a "unit"; unit u is sent once unit u-S has been received and reduced, so
// slices flow through the ring while later ones are still arriving. At most W units are in flight per
// direction (unit u waits for unit u-W), which bounds the staging scratch to W slices. Where the
// connection combines on arrival (shm), a reduce-scatter slice is reduced straight from the transport's
// buffer into the result, without staging (Schedule::recvReduce). Every unit is a message, empty ones too,
// so both ends count the same messages whatever the segment sizes.
#include <algorithm>
#include <vector>

#include "algorithms/algorithm.h"
#include "algorithms/layout.h"
#include "plan/dtype.h"

namespace myriad {
namespace {

constexpr size_t kWindow = 4;

class RingAllReduce final : public Algorithm {
 public:
  const char* name() const override { return "allreduce.ring"; }
  CollKind kind() const override { return CollKind::kAllReduce; }
  Status supports(const CollArgs&, const CommView&) const override { return Status::ok(); }
  // Every rank talks to r - 1 and r + 1 and walks the segments from its own: with equal segments all plans
  // are one plan moved around the ring.
  std::optional<uint64_t> planClass(const CollArgs& a, const CommView& comm) const override {
    if (a.count % static_cast<size_t>(comm.nranks()) != 0) return std::nullopt;
    return 0;
  }
  Result<Schedule> plan(const CollArgs& a, const CommView& comm) const override {
    Schedule s(name());
    const int n = comm.nranks(), r = comm.rank;
    const size_t es = dtypeSize(a.dtype);
    if (n == 1) {
      if (!a.inPlace() && a.count) s.copy(Schedule::recvBuf(), Schedule::sendBuf(), a.count * es);
      return s;
    }
    const size_t chunk = chunkElems(comm, es);
    const Blocks segs = Blocks::even(a.count, n);
    const size_t slices = std::max<size_t>(1, slicesOf(segs.maxCount(), chunk));
    const size_t units = 2 * static_cast<size_t>(n - 1) * slices;
    const BufRef staging = s.reserveScratch(kWindow * chunk * es);
    const int next = (r + 1) % n, prev = (r + n - 1) % n;
    auto mod = [n](int x) { return ((x % n) + n) % n; };
    auto sendSeg = [&](int step) { return step < n - 1 ? mod(r - step) : mod(r + 1 - (step - (n - 1))); };
    auto recvSeg = [&](int step) { return step < n - 1 ? mod(r - step - 1) : mod(r - (step - (n - 1))); };
    // Per unit: its send, its receive, and the step after which its result may be forwarded.
    std::vector<Schedule::Step> sent(units), got(units), ready(units);
    for (size_t u = 0; u < units; ++u) {
      const int step = static_cast<int>(u / slices);
      const size_t k = u % slices;
      const bool reducing = step < n - 1;
      // Receive first: unit u's send may wait for unit u-S's receive, never the other way.
      size_t seg = static_cast<size_t>(recvSeg(step));
      Slice in = sliceOf(segs.count[seg], chunk, k);
      size_t off = (segs.offset[seg] + in.begin) * es;
      Schedule::Deps window = u >= kWindow ? Schedule::Deps{got[u - kWindow]} : Schedule::Deps{};
      if (reducing)
        got[u] = s.recvReduce(prev, Schedule::recvBuf() + off, Schedule::sendBuf() + off,
                              staging + (u % kWindow) * chunk * es, in.count, a.dtype, a.op, window);
      else
        got[u] = s.recv(prev, Schedule::recvBuf() + off, in.count * es, window);
      ready[u] = got[u];
      if (a.op == myrAvg && step == n - 2 && in.count)
        ready[u] = s.scaleAvg(Schedule::recvBuf() + off, in.count, a.dtype, n, {got[u]});

      seg = static_cast<size_t>(sendSeg(step));
      Slice out = sliceOf(segs.count[seg], chunk, k);
      off = (segs.offset[seg] + out.begin) * es;
      Schedule::Deps deps;
      if (u >= slices) deps.push_back(ready[u - slices]);
      if (u >= kWindow) deps.push_back(sent[u - kWindow]);
      // The first reduce-scatter step sends the input; every later step what this rank reduced or received.
      BufRef src = (u < slices ? Schedule::sendBuf() : Schedule::recvBuf()) + off;
      sent[u] = s.send(next, src, out.count * es, deps);
    }
    return s;
  }
};

}  // namespace

const Algorithm& allreduceRing() {
  static const RingAllReduce kAlgo;
  return kAlgo;
}

}  // namespace myriad
