// gather.linear — every rank sends its `count` elements to the root, which receives rank r's block at
// offset r*count (its own block is a local copy). n-1 messages into one rank: the simplest correct
// schedule; the root's link is the bottleneck, as it is for any gather.
#include "algorithms/algorithm.h"
#include "algorithms/schedule.h"
#include "exec/dtype.h"

namespace myriad {
namespace {

class LinearGather final : public Algorithm {
 public:
  const char* name() const override { return "gather.linear"; }
  CollKind kind() const override { return CollKind::kGather; }
  Status supports(const CollArgs&, const Comm&) const override { return Status::ok(); }
  Result<std::unique_ptr<Task>> plan(const CollArgs& a, Comm& comm) const override {
    Schedule s(comm);
    size_t bytes = a.count * dtypeSize(a.dtype);
    if (comm.rank() != a.root) {
      s.send(a.root, a.sendbuff, bytes);
      return s.build(name());
    }
    auto* out = static_cast<uint8_t*>(a.recvbuff);
    for (int r = 0; r < comm.nranks(); ++r) {
      uint8_t* block = out + static_cast<size_t>(r) * bytes;
      if (r == comm.rank())
        s.copy(block, a.sendbuff, bytes);
      else
        s.recv(r, block, bytes);
    }
    return s.build(name());
  }
};

}  // namespace

const Algorithm& gatherLinear() {
  static const LinearGather kAlgo;
  return kAlgo;
}

}  // namespace myriad
