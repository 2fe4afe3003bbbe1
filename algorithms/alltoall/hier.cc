// alltoall.hier — node-aggregated all-to-all over H hosts of L ranks each. Rank (h, l):
//   1. inside the host, sends local rank l' every block it has for the ranks with local index l' (one
//      message per destination host; blocks for its own host land directly in the receiver's recvbuff);
//   2. on its rail, sends rank (h', l) one message holding the L blocks that host h has for (h', l),
//      collected in phase 1, and receives the L blocks host h' has for it.
// So the inter-host links carry H-1 messages of L blocks per rank instead of (H-1)*L single blocks: fewer,
// larger messages, the point of this algorithm for small and medium blocks. Needs even hosts; all-to-allv
// (whose phase-1 sizes would need the other ranks' counts first) runs as alltoall.pairwise. Scratch: the
// staging of phase 1 (H*L blocks), of phase 2 when a host's ranks are not consecutive, and an in-place copy.
#include "algorithms/algorithm.h"
#include "algorithms/layout.h"
#include "algorithms/schedule.h"
#include "exec/dtype.h"

namespace myriad {
namespace {

class HierAllToAll final : public Algorithm {
 public:
  const char* name() const override { return "alltoall.hier"; }
  CollKind kind() const override { return CollKind::kAllToAll; }
  Status supports(const CollArgs& a, const Comm& comm) const override {
    if (!a.sendCounts.empty()) return notSupported("all-to-allv counts are not aggregated by host");
    if (!evenHosts(comm)) return notSupported("hosts have different numbers of ranks");
    return Status::ok();
  }
  Result<std::unique_ptr<Task>> plan(const CollArgs& a, Comm& comm) const override {
    Schedule s(comm);
    const auto& hosts = comm.hosts();
    size_t es = dtypeSize(a.dtype), block = a.count * es, n = static_cast<size_t>(comm.nranks());
    size_t H = hosts.size(), L = hosts[0].size();
    size_t h = static_cast<size_t>(comm.hostOf(comm.rank())), l = static_cast<size_t>(comm.localIndex(comm.rank()));
    auto rank = [&](size_t host, size_t idx) { return hosts[host][idx]; };
    auto* out = static_cast<uint8_t*>(a.recvbuff);
    auto at = [&](const uint8_t* base, int r) { return const_cast<uint8_t*>(base) + static_cast<size_t>(r) * block; };
    size_t stageBytes = H * L * block;
    uint8_t* stage1 = s.reserveScratch(2 * stageBytes + (a.inPlace() ? n * block : 0));
    uint8_t* stage2 = stage1 + stageBytes;
    const uint8_t* src = static_cast<const uint8_t*>(a.sendbuff);
    Schedule::Deps start;
    if (a.inPlace()) {
      uint8_t* copy = stage2 + stageBytes;
      if (block) start = {s.copy(copy, src, n * block)};
      src = copy;
    }
    // stage1 slot (h', l'): the block local rank l' has for rank (h', l).
    auto slot = [&](size_t dstHost, size_t fromLocal) { return stage1 + (dstHost * L + fromLocal) * block; };
    std::vector<std::vector<Schedule::Step>> ready(H);  // per destination host: the phase-1 steps filling its slots
    for (size_t dh = 0; dh < H; ++dh) {
      uint8_t* dst = dh == h ? at(out, comm.rank()) : slot(dh, l);
      if (block) ready[dh].push_back(s.copy(dst, at(src, rank(dh, l)), block, start));
    }
    for (size_t i = 1; i < L; ++i) {
      size_t to = (l + i) % L, from = (l + L - i) % L;
      for (size_t dh = 0; dh < H; ++dh) s.send(rank(h, to), at(src, rank(dh, to)), block, start);
      for (size_t dh = 0; dh < H; ++dh) {
        uint8_t* dst = dh == h ? at(out, rank(h, from)) : slot(dh, from);
        ready[dh].push_back(s.recv(rank(h, from), dst, block, start));
      }
    }
    for (size_t i = 1; i < H; ++i) {
      size_t to = (h + i) % H, from = (h + H - i) % H;
      s.send(rank(to, l), slot(to, 0), L * block, ready[to].empty() ? start : ready[to]);
      bool consecutive = true;
      for (size_t j = 1; j < L; ++j) consecutive = consecutive && rank(from, j) == rank(from, 0) + static_cast<int>(j);
      if (consecutive) {
        s.recv(rank(from, l), at(out, rank(from, 0)), L * block, start);
        continue;
      }
      uint8_t* staged = stage2 + from * L * block;
      Schedule::Step got = s.recv(rank(from, l), staged, L * block, start);
      for (size_t j = 0; j < L; ++j) s.copy(at(out, rank(from, j)), staged + j * block, block, {got});
    }
    return s.build(name());
  }
};

}  // namespace

const Algorithm& alltoallHier() {
  static const HierAllToAll kAlgo;
  return kAlgo;
}

}  // namespace myriad
