// scatter.linear — the root sends block r (r*count elements in) to rank r and copies its own; every other
// rank receives one message. The mirror image of gather.linear.
#include "algorithms/algorithm.h"
#include "algorithms/schedule.h"
#include "exec/dtype.h"

namespace myriad {
namespace {

class LinearScatter final : public Algorithm {
 public:
  const char* name() const override { return "scatter.linear"; }
  CollKind kind() const override { return CollKind::kScatter; }
  Status supports(const CollArgs&, const Comm&) const override { return Status::ok(); }
  Result<std::unique_ptr<Task>> plan(const CollArgs& a, Comm& comm) const override {
    Schedule s(comm);
    size_t bytes = a.count * dtypeSize(a.dtype);
    if (comm.rank() != a.root) {
      s.recv(a.root, a.recvbuff, bytes);
      return s.build(name());
    }
    auto* in = static_cast<const uint8_t*>(a.sendbuff);
    for (int r = 0; r < comm.nranks(); ++r) {
      const uint8_t* block = in + static_cast<size_t>(r) * bytes;
      if (r == comm.rank())
        s.copy(a.recvbuff, block, bytes);
      else
        s.send(r, block, bytes);
    }
    return s.build(name());
  }
};

}  // namespace

const Algorithm& scatterLinear() {
  static const LinearScatter kAlgo;
  return kAlgo;
}

}  // namespace myriad
