// alltoall.hier — node-aggregated all-to-all(v) over H hosts of L ranks each. Rank (h, l):
//   1. inside the host, sends local rank l' every block it has for the ranks with local index l' (one
//      message per destination host; blocks for its own host land directly in the receiver's recvbuff);
//   2. on its rail, sends rank (h', l) one message holding the L blocks that host h has for (h', l),
//      collected in phase 1, and receives the L blocks host h' has for it.
// So the inter-host links carry H-1 messages of L blocks per rank instead of (H-1)*L single blocks: fewer,
// larger messages, the point of this algorithm for small and medium blocks. For all-to-allv, phase 1's
// sizes are other ranks' send counts: the host's ranks first all-gather their count vectors (a staged task),
// then plan. Needs even hosts. Scratch: phase-1 staging (H*L blocks), phase-2 staging when a host's blocks
// are not consecutive in recvbuff, and an in-place copy of the input.
#include "algorithms/algorithm.h"
#include "algorithms/pieces.h"
#include "exec/dtype.h"

namespace myriad {
namespace {

// Send counts, in elements, of every rank on this host: count(l', x) = what local rank l' sends rank x.
struct HostCounts {
  const CollArgs* a = nullptr;
  const std::vector<uint64_t>* table = nullptr;  // L x n, null for plain all-to-all
  size_t n = 0;
  size_t operator()(size_t local, int x) const {
    return table ? (*table)[local * n + static_cast<size_t>(x)] : a->count;
  }
};

Result<std::unique_ptr<Task>> planExchange(const CollArgs& a, Comm& comm, const HostCounts& counts) {
  Schedule s(comm);
  const auto& hosts = comm.hosts();
  size_t es = dtypeSize(a.dtype), H = hosts.size(), L = hosts[0].size();
  size_t h = static_cast<size_t>(comm.hostOf(comm.rank())), l = static_cast<size_t>(comm.localIndex(comm.rank()));
  auto rank = [&](size_t host, size_t idx) { return hosts[host][idx]; };
  auto* out = static_cast<uint8_t*>(a.recvbuff);
  auto outAt = [&](int x) { return bytePtr(out, a.recvDispl(x), es); };
  // Phase-1 staging: slot (dh, l') holds what local rank l' has for rank (dh, l), packed in that order.
  std::vector<size_t> slotOff(H * L + 1, 0);
  for (size_t dh = 0; dh < H; ++dh)
    for (size_t j = 0; j < L; ++j) slotOff[dh * L + j + 1] = slotOff[dh * L + j] + counts(j, rank(dh, l)) * es;
  size_t stage2Bytes = 0;
  for (size_t fh = 0; fh < H; ++fh) {
    size_t total = 0;
    for (size_t j = 0; j < L; ++j) total += a.recvCount(rank(fh, j)) * es;
    stage2Bytes = std::max(stage2Bytes, total);
  }
  size_t extent = a.sendExtent(comm.nranks()) * es;  // bytes
  size_t stage1Bytes = slotOff.back();
  uint8_t* stage1 = s.reserveScratch(stage1Bytes + (H - 1) * stage2Bytes + (a.inPlace() ? extent : 0));
  uint8_t* stage2 = stage1 + stage1Bytes;
  const uint8_t* src = static_cast<const uint8_t*>(a.sendbuff);
  Schedule::Deps start;
  if (a.inPlace()) {
    uint8_t* copy = stage2 + (H - 1) * stage2Bytes;
    if (extent) start = {s.copy(copy, src, extent)};
    src = copy;
  }
  auto srcAt = [&](int x) { return src + a.sendDispl(x) * es; };
  auto slot = [&](size_t dh, size_t j) { return stage1 + slotOff[dh * L + j]; };
  std::vector<std::vector<Schedule::Step>> ready(H);  // per destination host: the steps filling its slots
  for (size_t dh = 0; dh < H; ++dh) {
    int x = rank(dh, l);
    uint8_t* dst = dh == h ? outAt(x) : slot(dh, l);
    if (a.sendCount(x)) ready[dh].push_back(s.copy(dst, srcAt(x), a.sendCount(x) * es, start));
  }
  for (size_t i = 1; i < L; ++i) {
    size_t to = (l + i) % L, from = (l + L - i) % L;
    for (size_t dh = 0; dh < H; ++dh) s.send(rank(h, to), srcAt(rank(dh, to)), a.sendCount(rank(dh, to)) * es, start);
    for (size_t dh = 0; dh < H; ++dh) {
      bool home = dh == h;
      uint8_t* dst = home ? outAt(rank(h, from)) : slot(dh, from);
      size_t bytes = (home ? a.recvCount(rank(h, from)) : counts(from, rank(dh, l))) * es;
      ready[dh].push_back(s.recv(rank(h, from), dst, bytes, start));
    }
  }
  for (size_t i = 1; i < H; ++i) {
    size_t to = (h + i) % H, from = (h + H - i) % H;
    s.send(rank(to, l), slot(to, 0), slotOff[to * L + L] - slotOff[to * L], ready[to].empty() ? start : ready[to]);
    size_t total = 0;
    bool packed = true;  // the L blocks lie back to back in recvbuff, in local-rank order
    for (size_t j = 0; j < L; ++j) {
      int x = rank(from, j);
      if (j > 0 && a.recvDispl(x) != a.recvDispl(rank(from, j - 1)) + a.recvCount(rank(from, j - 1))) packed = false;
      total += a.recvCount(x) * es;
    }
    if (packed) {
      s.recv(rank(from, l), outAt(rank(from, 0)), total, start);
      continue;
    }
    uint8_t* staged = stage2 + (i - 1) * stage2Bytes;
    Schedule::Step got = s.recv(rank(from, l), staged, total, start);
    for (size_t j = 0, at = 0; j < L; ++j) {
      size_t bytes = a.recvCount(rank(from, j)) * es;
      if (bytes) s.copy(outAt(rank(from, j)), staged + at, bytes, {got});
      at += bytes;
    }
  }
  return s.build("alltoall.hier");
}

class HierAllToAll final : public Algorithm {
 public:
  const char* name() const override { return "alltoall.hier"; }
  CollKind kind() const override { return CollKind::kAllToAll; }
  Status supports(const CollArgs&, const Comm& comm) const override { return evenHosts(comm); }
  Result<std::unique_ptr<Task>> plan(const CollArgs& a, Comm& comm) const override {
    size_t n = static_cast<size_t>(comm.nranks());
    if (a.sendCounts.empty()) return planExchange(a, comm, HostCounts{&a, nullptr, n});
    // All-to-allv: the host's ranks all-gather their send counts, then the exchange is planned.
    Group local = Group::local(comm);
    auto table = std::make_shared<std::vector<uint64_t>>(static_cast<size_t>(local.size()) * n);
    auto mine = std::make_shared<std::vector<uint64_t>>(a.sendCounts.begin(), a.sendCounts.end());
    Schedule s(comm);
    GatherLayer layer{reinterpret_cast<uint8_t*>(table->data()), Blocks::uniform(n, local.size()), mine->data()};
    ringAllGatherSteps(s, local, {&layer, 1}, sizeof(uint64_t), n, {});
    MYR_ASSIGN_OR_RETURN(std::unique_ptr<Task> first, s.build(name()));
    return staged(std::move(first), [a, &comm, table, mine, n]() {
      return planExchange(a, comm, HostCounts{&a, table.get(), n});
    });
  }
};

}  // namespace

const Algorithm& alltoallHier() {
  static const HierAllToAll kAlgo;
  return kAlgo;
}

}  // namespace myriad
