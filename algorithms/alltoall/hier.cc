// alltoall.hier — node-aggregated all-to-all(v) over hosts of any sizes. Rank x = (dh, k) (local index k
// on host dh) is reached on lane k (lanes as in HostLanes, layout.h): on a host of L ranks its blocks are
// collected by local rank k mod L, which is on x's rail. Rank (h, l):
//   1. inside the host, sends local rank l' every block it has for the ranks it collects for: per
//      destination host dh, the ranks (dh, k) with k mod L = l' (one each on even hosts; blocks for its own
//      host land directly in the receiver's recvbuff);
//   2. sends each rank it collects for one message holding the L blocks its host has for that rank,
//      collected in phase 1, and receives from every other host one message holding that host's blocks
//      for it, from the rank there serving its lane.
// So the inter-host links carry one message per (source host, destination rank) instead of one per pair
// of ranks: fewer, larger messages, the point of this algorithm for small and medium blocks. On even hosts
// rank (h, l) collects for the ranks with local index l and talks to its rail; on a smaller host a rank
// collects for several ranks of a larger host. Two ranks exchange at most one message each way in phase 2
// and add phase 1's in one order (destination host, then lane), so both ends agree on message order. For
// all-to-allv, phase 1's sizes are other ranks' send counts: the host's ranks first all-gather their count
// vectors (a first stage whose continuation plans the exchange). Scratch: phase-1 staging (the L blocks of each rank
// collected for), phase-2 staging when a host's blocks are not consecutive in recvbuff, and an in-place copy of the
// input.
#include <cstring>
#include <utility>
#include <vector>

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
  HostLanes lanes(comm);
  size_t es = dtypeSize(a.dtype), H = hosts.size(), h = static_cast<size_t>(lanes.host());
  size_t L = hosts[h].size(), l = static_cast<size_t>(comm.localIndex(comm.rank));
  auto rank = [&](size_t host, size_t idx) { return hosts[host][idx]; };
  BufRef out = Schedule::recvBuf();
  auto outAt = [&](int x) { return at(out, a.recvDispl(x), es); };
  // The ranks of other hosts this rank collects for (its lanes below their host's size), by host then
  // lane: phase-1 staging holds, per collected rank x, what each local rank j has for x, packed in j order.
  struct Collected {
    int x;
    std::vector<size_t> at;  // L + 1 byte offsets into the staging
    std::vector<Schedule::Step> ready;
  };
  std::vector<std::vector<Collected>> collected(H);
  size_t stage1Bytes = 0;
  for (size_t dh = 0; dh < H; ++dh) {
    if (dh == h) continue;
    for (int k : lanes.served(lanes.size(static_cast<int>(dh)))) {
      Collected c{rank(dh, static_cast<size_t>(k)), {stage1Bytes}, {}};
      for (size_t j = 0; j < L; ++j) c.at.push_back(stage1Bytes += counts(j, c.x) * es);
      collected[dh].push_back(std::move(c));
    }
  }
  size_t stage2Bytes = 0;
  for (size_t fh = 0; fh < H; ++fh) {
    size_t total = 0;
    for (int x : hosts[fh]) total += a.recvCount(x) * es;
    if (fh != h) stage2Bytes = std::max(stage2Bytes, total);
  }
  size_t extent = a.sendExtent(comm.nranks()) * es;  // bytes
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
  // This rank's own blocks: for its host straight to recvbuff (its own lane only), else to staging.
  for (size_t dh = 0; dh < H; ++dh) {
    int me = comm.rank;
    if (dh == h && a.sendCount(me)) s.copy(outAt(me), srcAt(me), a.sendCount(me) * es, start);
    for (Collected& c : collected[dh])
      if (a.sendCount(c.x)) c.ready.push_back(s.copy(stage1 + c.at[l], srcAt(c.x), a.sendCount(c.x) * es, start));
  }
  // Phase 1: to local rank `to`, per destination host, the blocks for the ranks there on its lanes; from
  // local rank `from` what it has for the ranks this rank collects for, and its block for this rank.
  for (size_t i = 1; i < L; ++i) {
    size_t to = (l + i) % L, from = (l + L - i) % L;
    for (size_t dh = 0; dh < H; ++dh) {
      for (size_t k = to; k < hosts[dh].size(); k += L)
        s.send(rank(h, to), srcAt(rank(dh, k)), a.sendCount(rank(dh, k)) * es, start);
    }
    for (size_t dh = 0; dh < H; ++dh) {
      if (dh == h) {
        s.recv(rank(h, from), outAt(rank(h, from)), a.recvCount(rank(h, from)) * es, start);
        continue;
      }
      for (Collected& c : collected[dh])
        c.ready.push_back(s.recv(rank(h, from), stage1 + c.at[from], counts(from, c.x) * es, start));
    }
  }
  // Phase 2: to each rank collected for, one message of its L blocks; from each other host, from the rank
  // there serving this rank's lane, one message of that host's blocks for this rank.
  for (size_t i = 1; i < H; ++i) {
    size_t to = (h + i) % H, from = (h + H - i) % H;
    for (const Collected& c : collected[to])
      s.send(c.x, stage1 + c.at[0], c.at[L] - c.at[0], c.ready.empty() ? start : c.ready);
    int peer = lanes.server(static_cast<int>(from), static_cast<int>(l));
    const auto& fromHost = hosts[from];
    size_t total = 0;
    bool packed = true;  // the blocks lie back to back in recvbuff, in local-rank order
    for (size_t j = 0; j < fromHost.size(); ++j) {
      int x = fromHost[j];
      if (j > 0 && a.recvDispl(x) != a.recvDispl(fromHost[j - 1]) + a.recvCount(fromHost[j - 1])) packed = false;
      total += a.recvCount(x) * es;
    }
    if (packed) {
      s.recv(peer, outAt(fromHost[0]), total, start);
      continue;
    }
    BufRef staged = stage2 + (i - 1) * stage2Bytes;
    Schedule::Step got = s.recv(peer, staged, total, start);
    for (size_t j = 0, at = 0; j < fromHost.size(); ++j) {
      size_t bytes = a.recvCount(fromHost[j]) * es;
      if (bytes) s.copy(outAt(fromHost[j]), staged + at, bytes, {got});
      at += bytes;
    }
  }
  return s;
}

class HierAllToAll final : public Algorithm {
 public:
  const char* name() const override { return "alltoall.hier"; }
  CollKind kind() const override { return CollKind::kAllToAll; }
  Status supports(const CollArgs&, const CommView&) const override { return Status::ok(); }
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
