// CoupledWindows (see coupled_window.h): RFC 6356's linked increases over a peer's paths, halving on loss.
#include "transports/multipath/coupled_window.h"

#include <algorithm>

namespace myriad::mp {

void CoupledWindows::add(int slot) {
  if (paths_.count(slot)) return;
  // A path that joins (a re-path's fresh port, a spare promoted) starts at its siblings' mean window: at the
  // ceiling it would be as aggressive as a whole uncoupled flow each time the path set churns.
  const double start = paths_.empty() ? static_cast<double>(p_.ceiling)
                                      : static_cast<double>(total()) / static_cast<double>(paths_.size());
  auto it = paths_.try_emplace(slot).first;
  it->second.window = start;
  it->second.rttSec = p_.defaultRttSec;
  it->second.mss = p_.mss;
}

void CoupledWindows::remove(int slot) {
  paths_.erase(slot);
}

uint64_t CoupledWindows::window(int slot) const {
  auto it = paths_.find(slot);
  return it == paths_.end() ? p_.ceiling : static_cast<uint64_t>(it->second.window);
}

double CoupledWindows::rttSec(int slot) const {
  auto it = paths_.find(slot);
  return it == paths_.end() ? p_.defaultRttSec : it->second.rttSec;
}

uint64_t CoupledWindows::total() const {
  double t = 0;
  for (const auto& [slot, w] : paths_) t += w.window;
  return static_cast<uint64_t>(t);
}

// alpha = total * max_j(w_j / rtt_j^2) / (sum_j w_j / rtt_j)^2: 1 for a single path; for N alike paths 1/N,
// so that together they grow as one flow on the best of them would.
double CoupledWindows::alpha() const {
  double total = 0, best = 0, sum = 0;
  for (const auto& [slot, w] : paths_) {
    total += w.window;
    best = std::max(best, w.window / (w.rttSec * w.rttSec));
    sum += w.window / w.rttSec;
  }
  return sum > 0 ? total * best / (sum * sum) : 1;
}

void CoupledWindows::acked(int slot, uint64_t bytes) {
  auto it = paths_.find(slot);
  if (it == paths_.end()) return;
  PathWindow& w = it->second;
  if (w.window >= static_cast<double>(p_.ceiling)) return;
  const double b = static_cast<double>(bytes);
  const double total = static_cast<double>(this->total());
  const double coupled = alpha() * b * w.mss / total;
  const double alone = b * w.mss / w.window;
  w.window = std::min(static_cast<double>(p_.ceiling), w.window + std::min(coupled, alone));
}

bool CoupledWindows::observe(int slot, const Congestion& c, uint64_t inFlight, Clock::time_point now) {
  auto it = paths_.find(slot);
  if (it == paths_.end()) return false;
  PathWindow& w = it->second;
  if (c.rttSec > 0) w.rttSec = c.rttSec;
  if (c.mss > 0) w.mss = c.mss;
  const bool lost = w.seen && c.retransmits > w.retransmits;
  w.retransmits = std::max(w.retransmits, c.retransmits);
  w.seen = true;
  if (!lost ||
      (w.lastDecrease != Clock::time_point{} && std::chrono::duration<double>(now - w.lastDecrease).count() < w.rttSec))
    return false;
  const double from = std::min(w.window, static_cast<double>(inFlight));
  w.window = std::max(static_cast<double>(p_.floor), from / 2);
  w.lastDecrease = now;
  ++losses_;
  return true;
}

}  // namespace myriad::mp
