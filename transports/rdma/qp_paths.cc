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
      set_(o_.active, o_.spares, o_.ports, o_.seed),
      ctl_(o_.control, o_.seed * 0x9e3779b97f4a7c15ULL + 1) {
  for (int i = 0; i < o_.active + o_.spares; ++i) {
    int slot = set_.addPath(i < o_.active);
    mp::Path& p = set_.path(slot);
    p.state = i < o_.active ? mp::PathState::kActive : mp::PathState::kSpare;
    p.position = i < o_.active ? i : -1;
    if (i >= o_.active) spares_.push_back(slot);
  }
  stats_.resize(static_cast<size_t>(set_.size()));
}

std::vector<uint16_t> QpPaths::ports() const {
  std::vector<uint16_t> v;
  for (int s = 0; s < set_.size(); ++s) v.push_back(port(s));
  return v;
}

int QpPaths::slotAt(int position) const {
  for (int s = 0; s < set_.size(); ++s)
    if (set_.path(s).state == mp::PathState::kActive && set_.path(s).position == position) return s;
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
  const double latency = std::chrono::duration<double>(at - postedAt).count();
  s.bytes += bytes;
  s.roundBytes += bytes;
  s.roundLatency.push_back(latency);
  s.latency.add(latency);
  bytes_ += bytes;
  ++pieces_;
  ++roundCompletions_;
  mp::Path& p = set_.path(slot);
  if (p.state == mp::PathState::kDraining && s.inflight.empty()) {
    p.state = mp::PathState::kSpare;
    spares_.push_back(slot);
  }
}

bool QpPaths::roundDue() const {
  return roundCompletions_ >= o_.roundCompletionsPerPath * o_.active;
}

QpPaths::Repath QpPaths::maybeRound(Clock::time_point now) {
  if (!roundDue()) return {};
  const double secs = std::chrono::duration<double>(now - roundStart_).count();
  roundStart_ = now;
  roundCompletions_ = 0;
  std::vector<mp::PathRound> rounds;
  for (int slot = 0; slot < set_.size(); ++slot) {
    SlotStats& s = stats_[static_cast<size_t>(slot)];
    if (set_.path(slot).state == mp::PathState::kActive) {
      mp::PathRound r;
      r.slot = slot;
      r.bytes = s.roundBytes;
      r.serviceSec = std::move(s.roundLatency);
      rounds.push_back(std::move(r));
    }
    s.roundBytes = 0;
    s.roundLatency.clear();
  }
  const int named = ctl_.round(rounds, secs);
  if (!o_.adaptive || named < 0 || set_.path(named).state != mp::PathState::kActive) return {};
  return repath(named);
}

QpPaths::Repath QpPaths::repath(int slot) {
  if (spares_.empty()) return {};
  // A spare whose port is not tabu (longest spare first); when every spare's port is tabu (few QPs cycle
  // through the list), the one whose completions were fastest when it last carried data, so that a QP
  // retired for a real reason is the last to come back.
  auto it = std::find_if(spares_.begin(), spares_.end(), [&](int s) { return !set_.isTabu(port(s)); });
  if (it == spares_.end())
    it = std::min_element(spares_.begin(), spares_.end(), [&](int a, int b) {
      return stats_[static_cast<size_t>(a)].latency.quantile(0.5) <
             stats_[static_cast<size_t>(b)].latency.quantile(0.5);
    });
  const int promoted = *it;
  spares_.erase(it);
  mp::Path& old = set_.path(slot);
  mp::Path& fresh = set_.path(promoted);
  fresh.state = mp::PathState::kActive;
  fresh.position = old.position;
  fresh.repaths = old.repaths + 1;
  set_.tabu(old.port);
  old.position = -1;
  old.state = mp::PathState::kDraining;
  if (stats_[static_cast<size_t>(slot)].inflight.empty()) {
    old.state = mp::PathState::kSpare;
    spares_.push_back(slot);
  }
  ctl_.forget(slot);
  ctl_.forget(promoted);
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
  t.rounds = ctl_.rounds();
  t.throughput = ctl_.peerThroughput();
  t.adaptive = o_.adaptive;
  for (int slot = 0; slot < set_.size(); ++slot) {
    const mp::Path& p = set_.path(slot);
    const SlotStats& s = stats_[static_cast<size_t>(slot)];
    t.paths.push_back(mp::describePath(slot, p, s.bytes, ctl_.view(slot), s.latency));
  }
  return t;
}

}  // namespace myriad
