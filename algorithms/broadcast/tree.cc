// broadcast.tree — a binary tree in heap order rooted at the root (trees.h), pipelined: each rank receives
// slice k from its parent and forwards it to its two children. log2(n) depth for latency; each inner rank
// sends the message twice, so for large messages broadcast.ring is faster.
#include "algorithms/algorithm.h"
#include "algorithms/layout.h"
#include "algorithms/trees.h"
#include "plan/dtype.h"
#include "plan/schedule.h"

namespace myriad {
namespace {

class TreeBroadcast final : public Algorithm {
 public:
  const char* name() const override { return "broadcast.tree"; }
  CollKind kind() const override { return CollKind::kBroadcast; }
  Status supports(const CollArgs&, const CommView&) const override { return Status::ok(); }
  Result<Schedule> plan(const CollArgs& a, const CommView& comm) const override {
    Schedule s(name());
    TreeNode t = heapTree(comm.nranks(), a.root, comm.rank);
    size_t es = dtypeSize(a.dtype), chunk = chunkElems(comm, es), bytes = a.count * es;
    bool root = t.parent < 0;
    if (root && bytes && !a.inPlace()) s.copy(Schedule::recvBuf(), Schedule::sendBuf(), bytes);
    for (size_t k = 0; k < slicesOf(a.count, chunk); ++k) {
      Slice sl = sliceOf(a.count, chunk, k);
      BufRef dst = at(Schedule::recvBuf(), sl.begin, es);
      BufRef src = root ? at(Schedule::sendBuf(), sl.begin, es) : dst;
      Schedule::Deps got = root ? Schedule::Deps{} : Schedule::Deps{s.recv(t.parent, dst, sl.count * es)};
      for (int c : t.children) s.send(c, src, sl.count * es, got);
    }
    return s;
  }
};

}  // namespace

const Algorithm& broadcastTree() {
  static const TreeBroadcast kAlgo;
  return kAlgo;
}

}  // namespace myriad
