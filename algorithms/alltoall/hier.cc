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
#include <cstring>

#include "algorithms/algorithm.h"
#include "algorithms/pieces.h"
#include "plan/dtype.h"

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

Result<Schedule> planExchange(const CollArgs& a, const CommView& comm, const HostCounts& counts) {
  Schedule s("alltoall.hier");
  const auto& hosts = comm.hosts();
  size_t es = dtypeSize(a.dtype), H = hosts.size(), L = hosts[0].size();
  size_t h = static_cast<size_t>(comm.hostOf(comm.rank)), l = static_cast<size_t>(comm.localIndex(comm.rank));
  auto rank = [&](size_t host, size_t idx) { return hosts[host][idx]; };
  BufRef out = Schedule::recvBuf();
  auto outAt = [&](int x) { return at(out, a.recvDispl(x), es); };
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
  BufRef stage1 = s.reserveScratch(stage1Bytes + (H - 1) * stage2Bytes + (a.inPlace() ? extent : 0));
  BufRef stage2 = stage1 + stage1Bytes;
  BufRef src = Schedule::sendBuf();
  Schedule::Deps start;
  if (a.inPlace()) {
    BufRef copy = stage2 + (H - 1) * stage2Bytes;
    if (extent) start = {s.copy(copy, src, extent)};
    src = copy;
  }
  auto srcAt = [&](int x) { return src + a.sendDispl(x) * es; };
  auto slot = [&](size_t dh, size_t j) { return stage1 + slotOff[dh * L + j]; };
  std::vector<std::vector<Schedule::Step>> ready(H);  // per destination host: the steps filling its slots
  for (size_t dh = 0; dh < H; ++dh) {
    int x = rank(dh, l);
    BufRef dst = dh == h ? outAt(x) : slot(dh, l);
    if (a.sendCount(x)) ready[dh].push_back(s.copy(dst, srcAt(x), a.sendCount(x) * es, start));
  }
  for (size_t i = 1; i < L; ++i) {
    size_t to = (l + i) % L, from = (l + L - i) % L;
    for (size_t dh = 0; dh < H; ++dh) s.send(rank(h, to), srcAt(rank(dh, to)), a.sendCount(rank(dh, to)) * es, start);
    for (size_t dh = 0; dh < H; ++dh) {
      bool home = dh == h;
      BufRef dst = home ? outAt(rank(h, from)) : slot(dh, from);
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
    BufRef staged = stage2 + (i - 1) * stage2Bytes;
    Schedule::Step got = s.recv(rank(from, l), staged, total, start);
    for (size_t j = 0, at = 0; j < L; ++j) {
      size_t bytes = a.recvCount(rank(from, j)) * es;
      if (bytes) s.copy(outAt(rank(from, j)), staged + at, bytes, {got});
      at += bytes;
    }
  }
  return s;
}

class HierAllToAll final : public Algorithm {
 public:
  const char* name() const override { return "alltoall.hier"; }
  CollKind kind() const override { return CollKind::kAllToAll; }
  Status supports(const CollArgs&, const CommView& comm) const override { return evenHosts(comm); }
  Result<Schedule> plan(const CollArgs& a, const CommView& comm) const override {
    size_t n = static_cast<size_t>(comm.nranks());
    if (a.sendCounts.empty()) return planExchange(a, comm, HostCounts{&a, nullptr, n});
    // All-to-allv: the host's ranks all-gather their send counts, then the exchange is planned.
    // The schedule's local bytes: this rank's n counts, then the host's L x n table they gather into.
    Group local = Group::local(comm);
    size_t L = static_cast<size_t>(local.size());
    std::vector<uint64_t> mine(a.sendCounts.begin(), a.sendCounts.end());
    std::vector<uint8_t> bytes((1 + L) * n * sizeof(uint64_t));
    std::memcpy(bytes.data(), mine.data(), n * sizeof(uint64_t));
    Schedule s(name());
    BufRef counts = s.local(std::move(bytes));
    GatherLayer layer{counts + n * sizeof(uint64_t), Blocks::uniform(n, local.size()), counts};
    ringAllGatherSteps(s, local, {&layer, 1}, sizeof(uint64_t), n, {});
    s.then([a, comm, n, L](std::span<const uint8_t> gathered) -> Result<Schedule> {
      std::vector<uint64_t> table(L * n);
      std::memcpy(table.data(), gathered.data() + n * sizeof(uint64_t), table.size() * sizeof(uint64_t));
      return planExchange(a, comm, HostCounts{&a, &table, n});
    });
    return s;
  }
};

}  // namespace

const Algorithm& alltoallHier() {
  static const HierAllToAll kAlgo;
  return kAlgo;
}

}  // namespace myriad
