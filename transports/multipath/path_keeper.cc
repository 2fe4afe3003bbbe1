// PathKeeper (see path_keeper.h): per-path counters, rounds, telemetry.
#include "transports/multipath/path_keeper.h"

namespace myriad::mp {

PathKeeper::PathKeeper(PathKeeperOptions o)
    : o_(std::move(o)),
      set_(o_.active, o_.spares, o_.ports, o_.seed),
      ctl_(o_.control, o_.seed * 0x9e3779b97f4a7c15ULL + 1) {}

PathKeeper::Stat& PathKeeper::stat(int slot) {
  if (static_cast<size_t>(slot) >= stats_.size()) stats_.resize(static_cast<size_t>(slot) + 1);
  return stats_[static_cast<size_t>(slot)];
}

const PathKeeper::Stat& PathKeeper::stat(int slot) const {
  if (static_cast<size_t>(slot) >= stats_.size()) stats_.resize(static_cast<size_t>(slot) + 1);
  return stats_[static_cast<size_t>(slot)];
}

void PathKeeper::served(int slot, uint64_t bytes, double seconds) {
  Stat& s = stat(slot);
  s.bytes += bytes;
  s.roundBytes += bytes;
  s.roundService.push_back(seconds);
  s.latency.add(seconds);
  ++roundSamples_;
}

void PathKeeper::counted(int slot, uint64_t bytes) {
  Stat& s = stat(slot);
  s.bytes += bytes;
  s.roundBytes += bytes;
}

bool PathKeeper::roundDue() const {
  const int actives = set_.count(PathState::kActive);
  return actives > 0 && roundSamples_ >= o_.samplesPerPath * actives;
}

int PathKeeper::maybeRound(Clock::time_point now) {
  if (!roundDue()) return -1;
  const double secs = std::chrono::duration<double>(now - roundStart_).count();
  roundStart_ = now;
  roundSamples_ = 0;
  std::vector<PathRound> rounds;
  for (int slot = 0; slot < set_.size(); ++slot) {
    const PathState st = set_.path(slot).state;
    Stat& s = stat(slot);
    if (st == PathState::kActive || (o_.scouts && st == PathState::kSpare)) {
      PathRound r;
      r.slot = slot;
      r.active = st == PathState::kActive;
      r.bytes = s.roundBytes;
      r.serviceSec = std::move(s.roundService);
      rounds.push_back(std::move(r));
    }
    s.roundBytes = 0;
    s.roundService.clear();
  }
  const int named = ctl_.round(rounds, secs);
  lastNamed_ = named >= 0 && set_.path(named).state == PathState::kActive ? named : -1;
  bool calm = lastNamed_ < 0;
  for (const PathRound& r : rounds) {
    const PathView* v = r.active ? ctl_.view(r.slot) : nullptr;
    if (v && v->bad >= 2) calm = false;
  }
  if (!calm)
    calmRounds_ = 0;
  else if (calmRounds_++ == 0)
    calmSince_ = now;
  return o_.adaptive ? lastNamed_ : -1;
}

bool PathKeeper::calmFor(int rounds, double seconds, Clock::time_point now) const {
  return calmRounds_ >= rounds && std::chrono::duration<double>(now - calmSince_).count() >= seconds;
}

SpareChoice PathKeeper::chooseSpare(int slot, double gain) const {
  const PathView* slow = ctl_.view(slot);
  SpareChoice c;
  c.slowService = slow && slow->samples >= 2 ? slow->service : 0;
  int blind = -1;
  for (int i = 0; i < set_.size(); ++i) {
    if (set_.path(i).state != PathState::kSpare) continue;
    const PathView* v = ctl_.view(i);
    if (!v || v->samples < 2) {
      if (blind < 0) blind = i;
    } else if (c.slowService > 0 && v->service * gain > c.slowService) {
      c.behind.emplace_back(i, v->service);
    } else if (c.take < 0 || v->service < ctl_.view(c.take)->service) {
      c.take = i;
    }
  }
  if (c.take < 0) c.take = blind;
  return c;
}

void PathKeeper::describe(PeerTelemetry* t, bool skipUnusedClosed) const {
  t->rounds = ctl_.rounds();
  t->throughput = ctl_.peerThroughput();
  t->adaptive = o_.adaptive;
  for (int slot = 0; slot < set_.size(); ++slot) {
    const Path& p = set_.path(slot);
    const Stat& s = stat(slot);
    if (skipUnusedClosed && p.state == PathState::kClosed && s.bytes == 0) continue;
    t->paths.push_back(describePath(slot, p, s.bytes, ctl_.view(slot), s.latency));
  }
}

}  // namespace myriad::mp
