// QpPaths (see qp_paths.h): pull or static choice of a QP per piece, latency bookkeeping, rounds, re-paths.
#include "transports/rdma/qp_paths.h"

#include <algorithm>

namespace myriad {
namespace {
constexpr uint16_t kRoceLo = 0xC000;
}  // namespace

Result<mp::PortRange> rdmaPortRange(const std::string& text) {
  MYR_ASSIGN_OR_RETURN(mp::PortRange r, mp::parsePortRange(text));
  for (uint16_t p : r.preset)
    if (p < kRoceLo)
      return invalidArgument("MYRIAD_NET_PORTS: port " + std::to_string(p) +
                             " cannot be a RoCEv2 source port (a flow label gives 49152-65535 only)");
  if (text.empty() || !r.preset.empty()) {
    r.lo = kRoceLo;
    r.hi = 0xFFFF;
    return r;
  }
  r.lo = std::max(r.lo, kRoceLo);
  if (r.hi < r.lo || r.hi - r.lo < 16)
    return invalidArgument("MYRIAD_NET_PORTS='" + text +
                           "' leaves fewer than 16 RoCEv2 source ports (a flow label gives 49152-65535 only)");
  return r;
}

QpPaths::QpPaths(QpPathOptions o)
    : o_(std::move(o)),
      keeper_(mp::PathKeeperOptions{o_.active, o_.spares, o_.ports, o_.seed, o_.control, o_.roundCompletionsPerPath,
                                    o_.adaptive, false}) {
  mp::PathSet& set = keeper_.set();
  for (int i = 0; i < o_.active + o_.spares; ++i) {
    int slot = set.addPath(i < o_.active);
    mp::Path& p = set.path(slot);
    p.state = i < o_.active ? mp::PathState::kActive : mp::PathState::kSpare;
    p.position = i < o_.active ? i : -1;
    if (i >= o_.active) spares_.push_back(slot);
  }
  stats_.resize(static_cast<size_t>(set.size()));
}

std::vector<uint16_t> QpPaths::ports() const {
  std::vector<uint16_t> v;
  for (int s = 0; s < slots(); ++s) v.push_back(port(s));
  return v;
}

int QpPaths::slotAt(int position) const {
  const mp::PathSet& set = keeper_.set();
  for (int s = 0; s < set.size(); ++s)
    if (set.path(s).state == mp::PathState::kActive && set.path(s).position == position) return s;
  return -1;
}

int QpPaths::pick(size_t k, size_t pieces, uint32_t seq, const std::function<bool(int)>& room) const {
  if (!o_.adaptive) {
    const size_t n = static_cast<size_t>(o_.active);
    const size_t position = pieces <= 1 ? seq % n : k * n / pieces;
    const int s = slotAt(static_cast<int>(position));
    return s >= 0 && room(s) ? s : -1;
  }
  int best = -1;
  for (int position = 0; position < o_.active; ++position) {
    const int s = slotAt(position);
    if (s < 0 || !room(s) || outstanding(s) >= o_.capBytes) continue;
    if (best < 0 || outstanding(s) < outstanding(best)) best = s;
  }
  return best;
}

void QpPaths::posted(int slot, size_t bytes, Clock::time_point at) {
  SlotStats& s = stats_[static_cast<size_t>(slot)];
  s.inflight.emplace_back(at, bytes);
  s.outstanding += bytes;
}

void QpPaths::completed(int slot, Clock::time_point at) {
  SlotStats& s = stats_[static_cast<size_t>(slot)];
  if (s.inflight.empty()) return;
  auto [postedAt, bytes] = s.inflight.front();
  s.inflight.pop_front();
  s.outstanding -= bytes;
  keeper_.served(slot, bytes, std::chrono::duration<double>(at - postedAt).count());
  bytes_ += bytes;
  ++pieces_;
  mp::Path& p = keeper_.set().path(slot);
  if (p.state == mp::PathState::kDraining && s.inflight.empty()) {
    p.state = mp::PathState::kSpare;
    spares_.push_back(slot);
  }
}

QpPaths::Repath QpPaths::maybeRound(Clock::time_point now) {
  const int named = keeper_.maybeRound(now);
  return named >= 0 ? repath(named) : Repath{};
}

QpPaths::Repath QpPaths::repath(int slot) {
  if (spares_.empty()) return {};
  // A spare whose port is not tabu (longest spare first); when every spare's port is tabu (few QPs cycle
  // through the list), the one whose completions were fastest when it last carried data, so that a QP
  // retired for a real reason is the last to come back.
  mp::PathSet& set = keeper_.set();
  auto it = std::find_if(spares_.begin(), spares_.end(), [&](int s) { return !set.isTabu(port(s)); });
  if (it == spares_.end())
    it = std::min_element(spares_.begin(), spares_.end(), [&](int a, int b) {
      return keeper_.latency(a).quantile(0.5) < keeper_.latency(b).quantile(0.5);
    });
  const int promoted = *it;
  spares_.erase(it);
  mp::Path& old = set.path(slot);
  mp::Path& fresh = set.path(promoted);
  fresh.state = mp::PathState::kActive;
  fresh.position = old.position;
  fresh.repaths = old.repaths + 1;
  set.tabu(old.port);
  old.position = -1;
  old.state = mp::PathState::kDraining;
  if (stats_[static_cast<size_t>(slot)].inflight.empty()) {
    old.state = mp::PathState::kSpare;
    spares_.push_back(slot);
  }
  keeper_.forget(slot);
  keeper_.forget(promoted);
  ++repaths_;
  return {slot, promoted};
}

mp::PeerTelemetry QpPaths::telemetry(const std::string& comm, int rank, int peer) const {
  mp::PeerTelemetry t;
  t.transport = "rdma";
  t.comm = comm;
  t.rank = rank;
  t.peer = peer;
  t.bytes = bytes_;
  t.chunks = pieces_;
  t.repaths = static_cast<uint64_t>(repaths_);
  keeper_.describe(&t, false);
  return t;
}

}  // namespace myriad
