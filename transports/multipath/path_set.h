// PathSet: the paths of one connection towards one peer: N active paths plus spares, each a flow with an
// explicitly chosen source port (tcp: the socket's bound port; RoCE: the QP's flow label). Invariant: no two
// live paths toward the peer share a port, and a port abandoned (re-pathed or failed) is not chosen again
// while it is on the short tabu list.
#pragma once

#include <cstdint>
#include <deque>
#include <random>
#include <string>
#include <vector>

#include "base/status.h"

namespace myriad::mp {

enum class PathState : uint8_t {
  kOpening,      // connecting
  kSpare,        // ready; carries scout traffic only (one chunk at a time)
  kActive,       // carries data
  kDraining,     // re-pathed: takes nothing new, closes once its chunks are acknowledged
  kQuarantined,  // failed or stalled: closed at once, its chunks re-sent elsewhere
  kClosed,
};
const char* pathStateName(PathState s);

struct PortRange {
  uint16_t lo = 32768;
  uint16_t hi = 60999;
  std::vector<uint16_t> preset;  // taken first, in order (tests and benchmarks pin the first paths)
};
// "lo-hi", or a comma list of ports (then used first, the range staying the default): MYRIAD_NET_PORTS.
Result<PortRange> parsePortRange(const std::string& text);

struct Path {
  uint16_t port = 0;
  PathState state = PathState::kOpening;
  bool wantActive = false;  // becomes active (not spare) once opened
  int position = -1;        // which of the N active positions it holds (-1: spare, or none any more)
  uint32_t repaths = 0;     // times its position was given a new port before it
};

class PathSet {
 public:
  static constexpr size_t kTabuSize = 8;
  PathSet(int active, int spares, PortRange range, uint64_t seed);

  int wantActive() const { return active_; }
  int wantSpares() const { return spares_; }
  // A port that no live path uses, not tabu, not rejected by the caller before (`busy`: bind failed).
  uint16_t choosePort();
  void markBusy(uint16_t port) { tabu(port); }
  void tabu(uint16_t port);
  bool isTabu(uint16_t port) const;
  bool inUse(uint16_t port) const;

  // Slots: a new one (state kOpening) with a fresh port; returns its index.
  int addPath(bool active);
  Path& path(int slot) { return paths_[static_cast<size_t>(slot)]; }
  const Path& path(int slot) const { return paths_[static_cast<size_t>(slot)]; }
  int size() const { return static_cast<int>(paths_.size()); }
  int count(PathState s) const;
  // Live: opening, spare, active or draining.
  bool live(int slot) const;
  std::mt19937_64& rng() { return rng_; }

 private:
  int active_;
  int spares_;
  PortRange range_;
  std::vector<Path> paths_;
  std::deque<uint16_t> tabu_;
  std::mt19937_64 rng_;
};

}  // namespace myriad::mp
