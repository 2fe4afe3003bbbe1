// alltoall.pairwise — n-1 rounds with rotating peers: in round i rank r sends its block for r+i and
// receives the block of r-i, so every pair exchanges exactly once and each round every rank sends one
// message and receives one. Up to kRoundsInFlight rounds overlap. Serves all-to-all and all-to-allv (counts
// and displacements from CollArgs); empty blocks are still sent, as empty messages, so that counts that do
// not match between two ranks are an error naming the peer instead of a hang. In place, the input is first
// copied to scratch (one extra pass over the buffer).
#include "algorithms/algorithm.h"
#include "algorithms/layout.h"
#include "plan/dtype.h"
#include "plan/schedule.h"

namespace myriad {
namespace {

constexpr int kRoundsInFlight = 8;

class PairwiseAllToAll final : public Algorithm {
 public:
  const char* name() const override { return "alltoall.pairwise"; }
  CollKind kind() const override { return CollKind::kAllToAll; }
  Status supports(const CollArgs&, const CommView&) const override { return Status::ok(); }
  Result<Schedule> plan(const CollArgs& a, const CommView& comm) const override {
    Schedule s(name());
    int n = comm.nranks(), r = comm.rank;
    size_t es = dtypeSize(a.dtype);
    BufRef src = Schedule::sendBuf();
    Schedule::Deps start;
    if (a.inPlace()) {
      size_t extent = a.sendExtent(n);
      BufRef copy = s.reserveScratch(extent * es);
      if (extent) start = {s.copy(copy, src, extent * es)};
      src = copy;
    }
    auto out = [&](int p) { return at(Schedule::recvBuf(), a.recvDispl(p), es); };
    if (a.sendCount(r)) s.copy(out(r), src + a.sendDispl(r) * es, a.sendCount(r) * es, start);
    std::vector<Schedule::Step> rounds(static_cast<size_t>(n), -1);
    for (int i = 1; i < n; ++i) {
      int to = (r + i) % n, from = (r - i + n) % n;
      Schedule::Deps deps = start;
      if (i > kRoundsInFlight) deps.push_back(rounds[static_cast<size_t>(i - kRoundsInFlight)]);
      Schedule::Step sent = s.send(to, src + a.sendDispl(to) * es, a.sendCount(to) * es, deps);
      Schedule::Step got = s.recv(from, out(from), a.recvCount(from) * es, deps);
      rounds[static_cast<size_t>(i)] = s.join({sent, got});
    }
    return s;
  }
};

}  // namespace

const Algorithm& alltoallPairwise() {
  static const PairwiseAllToAll kAlgo;
  return kAlgo;
}

}  // namespace myriad
