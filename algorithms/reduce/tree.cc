// reduce.tree — a binary tree in heap order rooted at the root (trees.h), pipelined: for slice k each rank
// receives its children's partials into scratch slots, reduces them with its own input (the root into
// recvbuff, others into an accumulator slot) and sends the result to its parent. log2(n) depth; slots are
// a window of kWindow slices, each refilled once the steps that read it are done.
#include "algorithms/algorithm.h"
#include "algorithms/layout.h"
#include "algorithms/trees.h"
#include "plan/dtype.h"
#include "plan/schedule.h"

namespace myriad {
namespace {

constexpr size_t kWindow = 4;

class TreeReduce final : public Algorithm {
 public:
  const char* name() const override { return "reduce.tree"; }
  CollKind kind() const override { return CollKind::kReduce; }
  Status supports(const CollArgs&, const CommView&) const override { return Status::ok(); }
  Result<Schedule> plan(const CollArgs& a, const CommView& comm) const override {
    Schedule s(name());
    TreeNode t = heapTree(comm.nranks(), a.root, comm.rank);
    size_t es = dtypeSize(a.dtype), chunk = chunkElems(comm, es), slices = slicesOf(a.count, chunk);
    size_t nc = t.children.size(), slotBytes = chunk * es;
    bool root = t.parent < 0;
    if (nc == 0) {  // a leaf sends its input; a lone root copies it
      for (size_t k = 0; k < slices; ++k) {
        Slice sl = sliceOf(a.count, chunk, k);
        if (!root) s.send(t.parent, at(Schedule::sendBuf(), sl.begin, es), sl.count * es);
      }
      if (root && a.count && !a.inPlace()) s.copy(Schedule::recvBuf(), Schedule::sendBuf(), a.count * es);
      return s;
    }
    // Per window position: nc child slots, then (off the root) one accumulator slot.
    size_t perSlice = nc + (root ? 0 : 1);
    BufRef scratch = s.reserveScratch(kWindow * perSlice * slotBytes);
    std::vector<Schedule::Step> done(slices, -1);  // slice k's slots are free after this step
    for (size_t k = 0; k < slices; ++k) {
      Slice sl = sliceOf(a.count, chunk, k);
      BufRef base = scratch + (k % kWindow) * perSlice * slotBytes;
      BufRef acc = root ? at(Schedule::recvBuf(), sl.begin, es) : base + nc * slotBytes;
      Schedule::Deps free = k >= kWindow ? Schedule::Deps{done[k - kWindow]} : Schedule::Deps{};
      BufRef in = at(Schedule::sendBuf(), sl.begin, es);
      Schedule::Step last = -1;
      for (size_t c = 0; c < nc; ++c) {
        BufRef slot = base + c * slotBytes;
        Schedule::Step got = s.recv(t.children[c], slot, sl.count * es, free);
        Schedule::Deps deps = last < 0 ? free : Schedule::Deps{last};
        deps.push_back(got);
        last = s.reduce(acc, c == 0 ? in : acc, slot, sl.count, a.dtype, a.op, deps);
      }
      if (root && a.op == myrAvg) last = s.scaleAvg(acc, sl.count, a.dtype, comm.nranks(), {last});
      done[k] = root ? last : s.send(t.parent, acc, sl.count * es, {last});
    }
    return s;
  }
};

}  // namespace

const Algorithm& reduceTree() {
  static const TreeReduce kAlgo;
  return kAlgo;
}

}  // namespace myriad
