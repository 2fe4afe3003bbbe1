// PathSet: port choice (preset list, then random in the range, never a live or tabu port) and path slots.
#include "transports/multipath/path_set.h"

#include <algorithm>
#include <cstdlib>

namespace myriad::mp {

const char* pathStateName(PathState s) {
  switch (s) {
    case PathState::kOpening: return "opening";
    case PathState::kSpare: return "spare";
    case PathState::kActive: return "active";
    case PathState::kDraining: return "draining";
    case PathState::kQuarantined: return "quarantined";
    case PathState::kClosed: return "closed";
  }
  return "?";
}

Result<PortRange> parsePortRange(const std::string& text) {
  PortRange r;
  if (text.empty()) return r;
  auto bad = [&] { return invalidArgument("MYRIAD_NET_PORTS='" + text + "' is neither lo-hi nor a list of ports"); };
  auto num = [](const std::string& s, long* v) {
    char* end = nullptr;
    *v = std::strtol(s.c_str(), &end, 10);
    return !s.empty() && *end == '\0' && *v >= 1024 && *v <= 65535;
  };
  size_t dash = text.find('-');
  if (dash != std::string::npos) {
    long lo = 0, hi = 0;
    if (!num(text.substr(0, dash), &lo) || !num(text.substr(dash + 1), &hi) || hi - lo < 16) return bad();
    r.lo = static_cast<uint16_t>(lo);
    r.hi = static_cast<uint16_t>(hi);
    return r;
  }
  size_t pos = 0;
  while (pos <= text.size()) {
    size_t comma = std::min(text.find(',', pos), text.size());
    long v = 0;
    if (!num(text.substr(pos, comma - pos), &v)) return bad();
    r.preset.push_back(static_cast<uint16_t>(v));
    pos = comma + 1;
  }
  return r;
}

PathSet::PathSet(int active, int spares, PortRange range, uint64_t seed)
    : active_(active), spares_(spares), range_(std::move(range)), rng_(seed) {}

bool PathSet::live(int slot) const {
  PathState s = path(slot).state;
  return s != PathState::kClosed && s != PathState::kQuarantined;
}

bool PathSet::inUse(uint16_t port) const {
  for (int i = 0; i < size(); ++i)
    if (live(i) && path(i).port == port) return true;
  return false;
}

bool PathSet::isTabu(uint16_t port) const {
  return std::find(tabu_.begin(), tabu_.end(), port) != tabu_.end();
}

void PathSet::tabu(uint16_t port) {
  if (isTabu(port)) return;
  tabu_.push_back(port);
  if (tabu_.size() > kTabuSize) tabu_.pop_front();
}

uint16_t PathSet::choosePort() {
  while (!range_.preset.empty()) {
    uint16_t p = range_.preset.front();
    range_.preset.erase(range_.preset.begin());
    if (!inUse(p) && !isTabu(p)) return p;
  }
  std::uniform_int_distribution<int> pick(range_.lo, range_.hi);
  while (true) {
    auto p = static_cast<uint16_t>(pick(rng_));
    if (!inUse(p) && !isTabu(p)) return p;
  }
}

int PathSet::addPath(bool active) {
  Path p;
  p.port = choosePort();
  p.wantActive = active;
  paths_.push_back(p);
  return size() - 1;
}

int PathSet::count(PathState s) const {
  int n = 0;
  for (const auto& p : paths_) n += p.state == s ? 1 : 0;
  return n;
}

}  // namespace myriad::mp
