// scatter.linear — the root sends block r (r*count elements in) to rank r and copies its own; every other
// rank receives one message. The mirror image of gather.linear.
#include "algorithms/algorithm.h"
#include "plan/dtype.h"
#include "plan/schedule.h"

namespace myriad {
namespace {

class LinearScatter final : public Algorithm {
 public:
  const char* name() const override { return "scatter.linear"; }
  CollKind kind() const override { return CollKind::kScatter; }
  Status supports(const CollArgs&, const CommView&) const override { return Status::ok(); }
  Result<Schedule> plan(const CollArgs& a, const CommView& comm) const override {
    Schedule s(name());
    size_t bytes = a.count * dtypeSize(a.dtype);
    if (comm.rank != a.root) {
      s.recv(a.root, Schedule::recvBuf(), bytes);
      return s;
    }
    BufRef in = Schedule::sendBuf();
    for (int r = 0; r < comm.nranks(); ++r) {
      BufRef block = in + static_cast<size_t>(r) * bytes;
      if (r == comm.rank)
        s.copy(Schedule::recvBuf(), block, bytes);
      else
        s.send(r, block, bytes);
    }
    return s;
  }
};

}  // namespace

const Algorithm& scatterLinear() {
  static const LinearScatter kAlgo;
  return kAlgo;
}

}  // namespace myriad
