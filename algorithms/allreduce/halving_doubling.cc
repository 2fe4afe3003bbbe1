// allreduce.halving_doubling — log2(p) rounds over p = the largest power of two <= n ranks. Non-powers of
// two are folded in first, the standard way: of the first 2(n-p) ranks, each even one sends its whole input
// to the odd one above it, which reduces it and takes part; at the end it sends the result back.
// Among the p taking part (virtual rank v), two forms:
//  - up to kWholeVector bytes, recursive doubling: in round i, v exchanges the whole vector with v^2^i and
//    reduces (log2 p messages; every rank combines the same partial results, so all agree bit for bit);
//  - above it, recursive halving then doubling: v swaps half of its current range with v^(p/2), v^(p/4)...
//    keeping the half its bit selects and reducing it, until it owns block v; then the ranges are swapped back
//    in the reverse order of partners (2 log2 p messages, each rank sends about 2x the vector in total).
#include "algorithms/algorithm.h"
#include "algorithms/layout.h"
#include "plan/dtype.h"
#include "plan/schedule.h"

namespace myriad {
namespace {

constexpr size_t kWholeVector = 32 << 10;

using Step = Schedule::Step;

class HalvingDoublingAllReduce final : public Algorithm {
 public:
  const char* name() const override { return "allreduce.halving_doubling"; }
  CollKind kind() const override { return CollKind::kAllReduce; }
  Status supports(const CollArgs&, const CommView&) const override { return Status::ok(); }

  Result<Schedule> plan(const CollArgs& a, const CommView& comm) const override {
    Schedule s(name());
    int n = comm.nranks(), r = comm.rank, p = 1;
    while (p * 2 <= n) p *= 2;
    int rem = n - p;
    size_t es = dtypeSize(a.dtype), bytes = a.count * es;
    BufRef out = Schedule::recvBuf();
    if (n == 1) {
      if (bytes && !a.inPlace()) s.copy(out, Schedule::sendBuf(), bytes);
      return s;
    }
    if (r < 2 * rem && r % 2 == 0) {  // folded in: hand the input over, get the result back
      Step sent = s.send(r + 1, Schedule::sendBuf(), bytes);
      s.recv(r + 1, out, bytes, {sent});
      return s;
    }
    BufRef scratch = s.reserveScratch(bytes);
    BufRef src = Schedule::sendBuf();
    Schedule::Deps prev;
    if (r < 2 * rem) {  // takes the even neighbour's input first
      Step got = s.recv(r - 1, scratch, bytes);
      prev = {s.reduce(out, src, scratch, a.count, a.dtype, a.op, {got})};
      src = out;
    }
    int v = r < 2 * rem ? r / 2 : r - rem;
    auto real = [rem](int u) { return u < rem ? 2 * u + 1 : u + rem; };
    if (bytes <= kWholeVector)
      prev = wholeVector(s, a, n, p, v, real, src, scratch, prev);
    else
      prev = halvingDoubling(s, a, n, p, v, real, src, scratch, prev);
    if (r < 2 * rem) s.send(r - 1, out, bytes, prev);
    return s;
  }

 private:
  template <class Real>
  static Schedule::Deps wholeVector(Schedule& s, const CollArgs& a, int n, int p, int v, Real real, BufRef src,
                                    BufRef scratch, Schedule::Deps prev) {
    size_t bytes = a.count * dtypeSize(a.dtype);
    BufRef out = Schedule::recvBuf();
    for (int mask = 1; mask < p; mask *= 2) {
      int peer = real(v ^ mask);
      Step sent = s.send(peer, src, bytes, prev);
      Step got = s.recv(peer, scratch, bytes, prev);
      prev = {s.reduce(out, src, scratch, a.count, a.dtype, a.op, {sent, got})};
      src = out;
    }
    if (a.op == myrAvg) prev = {s.scaleAvg(out, a.count, a.dtype, n, prev)};
    return prev;
  }

  template <class Real>
  static Schedule::Deps halvingDoubling(Schedule& s, const CollArgs& a, int n, int p, int v, Real real, BufRef src,
                                        BufRef scratch, Schedule::Deps prev) {
    size_t es = dtypeSize(a.dtype);
    BufRef out = Schedule::recvBuf();
    Blocks blocks = Blocks::even(a.count, p);
    auto span = [&](int lo, int hi) {  // elements of blocks [lo, hi): offset, count
      size_t b = blocks.offset[static_cast<size_t>(lo)];
      size_t e = hi < p ? blocks.offset[static_cast<size_t>(hi)] : a.count;
      return std::pair<size_t, size_t>{b, e - b};
    };
    int lo = 0, hi = p;
    for (int mask = p / 2; mask >= 1; mask /= 2) {
      int mid = lo + (hi - lo) / 2, peer = real(v ^ mask);
      bool lower = (v & mask) == 0;
      auto keep = lower ? span(lo, mid) : span(mid, hi);
      auto give = lower ? span(mid, hi) : span(lo, mid);
      Step sent = s.send(peer, src + give.first * es, give.second * es, prev);
      Step got = s.recv(peer, scratch, keep.second * es, prev);
      Step red = s.reduce(out + keep.first * es, src + keep.first * es, scratch, keep.second, a.dtype, a.op, {got});
      prev = {s.join({sent, red})};
      src = out;
      (lower ? hi : lo) = mid;
    }
    if (a.op == myrAvg) {
      auto mine = span(lo, hi);
      prev = {s.scaleAvg(out + mine.first * es, mine.second, a.dtype, n, prev)};
    }
    for (int mask = 1; mask < p; mask *= 2) {
      int peer = real(v ^ mask), width = hi - lo;
      bool lower = (v & mask) == 0;
      auto mine = span(lo, hi);
      auto theirs = lower ? span(hi, hi + width) : span(lo - width, lo);
      Step sent = s.send(peer, out + mine.first * es, mine.second * es, prev);
      Step got = s.recv(peer, out + theirs.first * es, theirs.second * es, prev);
      prev = {s.join({sent, got})};
      (lower ? hi : lo) = lower ? hi + width : lo - width;
    }
    return prev;
  }
};

}  // namespace

const Algorithm& allreduceHalvingDoubling() {
  static const HalvingDoublingAllReduce kAlgo;
  return kAlgo;
}

}  // namespace myriad
