// barrier.dissemination — ceil(log2 n) rounds; in round k rank r sends an empty message to r+2^k and
// waits for one from r-2^k. After the last round every rank has heard, directly or through others, from
// every rank, so none leaves before all have arrived. Works for any n, no power of two needed.
#include "algorithms/algorithm.h"
#include "plan/schedule.h"

namespace myriad {
namespace {

class DisseminationBarrier final : public Algorithm {
 public:
  const char* name() const override { return "barrier.dissemination"; }
  CollKind kind() const override { return CollKind::kBarrier; }
  Status supports(const CollArgs&, const CommView&) const override { return Status::ok(); }
  Result<Schedule> plan(const CollArgs&, const CommView& comm) const override {
    Schedule s(name());
    int n = comm.nranks(), r = comm.rank;
    Schedule::Step prev = -1;
    for (int dist = 1; dist < n; dist *= 2) {
      Schedule::Deps after = prev < 0 ? Schedule::Deps{} : Schedule::Deps{prev};
      Schedule::Step sent = s.send((r + dist) % n, BufRef{}, 0, after);
      Schedule::Step got = s.recv((r - dist + n) % n, BufRef{}, 0, after);
      prev = s.join({sent, got});
    }
    return s;
  }
};

}  // namespace

const Algorithm& barrierDissemination() {
  static const DisseminationBarrier kAlgo;
  return kAlgo;
}

}  // namespace myriad
