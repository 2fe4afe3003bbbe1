// allreduce.tree — a pipelined double binary tree. The vector is split in two halves; half t is reduced up
// tree t to its root and broadcast back down (trees.h: the two trees are shifted or mirrored copies, so a
// rank that is an inner node of one is mostly a leaf of the other and each rank's links carry about one
// tree's worth). Per slice k of MYRIAD_CHUNK_BYTES and tree t, a rank receives its children's partials into
// scratch slots (the first child's reduced on arrival where the connection combines), reduces them with its
// input into recvbuff, sends that to its parent, receives the final slice back into recvbuff and forwards it
// to its children. Latency ~2 log2(n) slice hops, full pipelining.
// Steps are added in one order on every rank, so both ends of every link agree: for j = 0, 1, ...: the up
// phase of slice j in both trees, then the down phase of slice j - downLag(n) in both trees.
#include <bit>

#include "algorithms/algorithm.h"
#include "algorithms/layout.h"
#include "algorithms/trees.h"
#include "plan/dtype.h"
#include "plan/schedule.h"

namespace myriad {
namespace {

constexpr size_t kWindow = 4;

// How many slices the down phase is added behind the up phase. Messages to one peer leave in the order
// their steps were added, and in a double binary tree a rank often sends up one tree and down the other
// to the same peer. A slice's way down can start only after its way up to the root, so if the two are
// added for the same slice, the next slices' way up waits behind it on that link: each slice pays a trip
// to the root and back and the pipeline drains (myriad-sim: 64 ranks, 64 MiB, a non-blocking fabric,
// 0.88 GB/s busbw against 9.5). Added depth + window slices later, a slice's way down is due on the link
// about when it is ready.
size_t downLag(int n) {
  const size_t depth = static_cast<size_t>(std::bit_width(static_cast<unsigned>(n - 1)));  // ceil(log2 n)
  return depth + kWindow;
}

class TreeAllReduce final : public Algorithm {
 public:
  const char* name() const override { return "allreduce.tree"; }
  CollKind kind() const override { return CollKind::kAllReduce; }
  Status supports(const CollArgs&, const CommView&) const override { return Status::ok(); }
  // A rank's plan follows from where its parent and children sit in the two trees, nothing else (both halves
  // are the same for all ranks): ranks whose peers lie at the same distances have one plan moved.
  std::optional<uint64_t> planClass(const CollArgs&, const CommView& comm) const override {
    const int n = comm.nranks(), r = comm.rank;
    uint64_t key = 0x243f6a8885a308d3ULL;
    auto mix = [&key](uint64_t v) {  // splitmix64 over the running key
      key += v + 0x9e3779b97f4a7c15ULL;
      key = (key ^ (key >> 30)) * 0xbf58476d1ce4e5b9ULL;
      key = (key ^ (key >> 27)) * 0x94d049bb133111ebULL;
      key ^= key >> 31;
    };
    auto away = [&](int peer) { return static_cast<uint64_t>(((peer - r) % n + n) % n); };
    for (int t = 0; t < 2; ++t) {
      const TreeNode node = doubleTree(n, r, t);
      mix(node.parent < 0 ? ~uint64_t{0} : away(node.parent));
      mix(node.children.size());
      for (int c : node.children) mix(away(c));
    }
    return key;
  }
  Result<Schedule> plan(const CollArgs& a, const CommView& comm) const override {
    Schedule s(name());
    int n = comm.nranks();
    size_t es = dtypeSize(a.dtype), chunk = chunkElems(comm, es), slotBytes = chunk * es;
    if (n == 1) {
      if (a.count && !a.inPlace()) s.copy(Schedule::recvBuf(), Schedule::sendBuf(), a.count * es);
      return s;
    }
    Blocks halves = Blocks::even(a.count, 2);
    TreeNode trees[2] = {doubleTree(n, comm.rank, 0), doubleTree(n, comm.rank, 1)};
    size_t slices = slicesOf(halves.maxCount(), chunk);
    // Slots: [window position][tree][child].
    BufRef scratch = s.reserveScratch(kWindow * 2 * 2 * slotBytes);
    std::vector<Schedule::Step> freed(2 * slices, -1);   // per (slice, tree): its child slots may be refilled
    std::vector<Schedule::Step> upDone(2 * slices, -1);  // per (slice, tree): sent up, or final at the root
    // Slice k of tree t: its elements, and where they sit in each buffer.
    struct Place {
      size_t count, bytes;
      BufRef acc, in;
    };
    auto place = [&](size_t k, size_t t) {
      Slice sl = sliceOf(halves.count[t], chunk, k);
      size_t off = halves.offset[t] + sl.begin;
      return Place{sl.count, sl.count * es, at(Schedule::recvBuf(), off, es), at(Schedule::sendBuf(), off, es)};
    };
    auto upPhase = [&](size_t k, size_t t) {
      const TreeNode& node = trees[t];
      const auto [count, bytes, acc, in] = place(k, t);
      if (!count) return;
      Schedule::Step prior = k >= kWindow ? freed[(k - kWindow) * 2 + t] : -1;
      Schedule::Deps free = prior >= 0 ? Schedule::Deps{prior} : Schedule::Deps{};
      // Children's partials, reduced with this rank's input into recvbuff.
      Schedule::Step partial = -1;
      for (size_t c = 0; c < node.children.size(); ++c) {
        BufRef slot = scratch + (((k % kWindow) * 2 + t) * 2 + c) * slotBytes;
        if (c == 0) {  // needs only the message: reduced on arrival where the connection can
          partial = s.recvReduce(node.children[c], acc, in, slot, count, a.dtype, a.op, free);
          continue;
        }
        Schedule::Step got = s.recv(node.children[c], slot, bytes, free);
        partial = s.reduce(acc, acc, slot, count, a.dtype, a.op, {got, partial});
      }
      freed[k * 2 + t] = partial;
      BufRef up = partial >= 0 ? acc : in;
      Schedule::Deps ready = partial >= 0 ? Schedule::Deps{partial} : Schedule::Deps{};
      Schedule::Step& done = upDone[k * 2 + t];
      if (node.parent >= 0) {
        done = s.send(node.parent, up, bytes, ready);
      } else {  // the root: its partial is the result
        done = partial >= 0 ? partial : s.copy(acc, in, bytes);
        if (a.op == myrAvg) done = s.scaleAvg(acc, count, a.dtype, n, {done});
      }
    };
    // The final slice from the parent (the root has it already) goes on to the children.
    auto downPhase = [&](size_t k, size_t t) {
      const TreeNode& node = trees[t];
      const Place p = place(k, t);
      if (!p.count) return;
      Schedule::Step final = upDone[k * 2 + t];
      if (node.parent >= 0) final = s.recv(node.parent, p.acc, p.bytes, {final});
      for (int c : node.children) s.send(c, p.acc, p.bytes, {final});
    };
    const size_t lag = downLag(n);
    for (size_t j = 0; j < slices + lag; ++j) {
      if (j < slices)
        for (size_t t = 0; t < 2; ++t) upPhase(j, t);
      if (j >= lag)
        for (size_t t = 0; t < 2; ++t) downPhase(j - lag, t);
    }
    return s;
  }
};

}  // namespace

const Algorithm& allreduceTree() {
  static const TreeAllReduce kAlgo;
  return kAlgo;
}

}  // namespace myriad
