// gather.linear — every rank sends its `count` elements to the root, which receives rank r's block at
// offset r*count (its own block is a local copy). n-1 messages into one rank: the simplest correct
// schedule; the root's link is the bottleneck, as it is for any gather.
#include "algorithms/algorithm.h"
#include "plan/dtype.h"
#include "plan/schedule.h"

namespace myriad {
namespace {

class LinearGather final : public Algorithm {
 public:
  const char* name() const override { return "gather.linear"; }
  CollKind kind() const override { return CollKind::kGather; }
  Status supports(const CollArgs&, const CommView&) const override { return Status::ok(); }
  Result<Schedule> plan(const CollArgs& a, const CommView& comm) const override {
    Schedule s(name());
    size_t bytes = a.count * dtypeSize(a.dtype);
    if (comm.rank != a.root) {
      s.send(a.root, Schedule::sendBuf(), bytes);
      return s;
    }
    BufRef out = Schedule::recvBuf();
    for (int r = 0; r < comm.nranks(); ++r) {
      BufRef block = out + static_cast<size_t>(r) * bytes;
      if (r == comm.rank)
        s.copy(block, Schedule::sendBuf(), bytes);
      else
        s.recv(r, block, bytes);
    }
    return s;
  }
};

}  // namespace

const Algorithm& gatherLinear() {
  static const LinearGather kAlgo;
  return kAlgo;
}

}  // namespace myriad
