// CoupledWindows: how many bytes each active path of one peer may hold in flight, the paths' windows coupled
// as RFC 6356's linked increases (LIA) couple MPTCP subflows, so that N paths through one bottleneck take
// about one flow's share from a competitor there, not N, and bytes shift toward the paths that lose less.
//   - a loss on path i (the transport saw a retransmission) halves its window, from the bytes it had in flight,
//     at most once per round trip of that path;
//   - `acked` bytes delivered on path i grow its window by min(alpha * acked * mss / total, acked * mss / w_i),
//     alpha = total * max_j(w_j / rtt_j^2) / (sum_j w_j / rtt_j)^2, total = sum_j w_j.
// The transport's own congestion control (kernel TCP per lane) still runs beneath: these windows sit above it,
// in the bytes the path set lets each path hold. The first window starts at the ceiling (the lane cap), later
// ones at their siblings' mean, and only a loss lowers one, so on a link where nothing is lost (nobody
// competes, no queue overflows) nothing is given up.
// Invariant: floor <= window(i) <= ceiling for every known path. No I/O, no clock of its own.
#pragma once

#include <cstdint>
#include <map>

#include "base/clock.h"

namespace myriad::mp {

struct CoupledParams {
  uint64_t ceiling = 256 << 10;  // a path's window without losses: the lane cap
  uint64_t floor = 8 << 10;      // a few segments; a path under a chunk shares chunks (PullScheduler::room)
  double mss = 1448;             // bytes per segment, until the transport says (Congestion::mss)
  double defaultRttSec = 1e-3;   // a path's round trip until the transport says
};

// What the transport knows of one path's congestion: its counter of retransmitted segments (only ever grows),
// its smoothed round trip and its segment size. tcp: TCP_INFO's total_retrans, rtt and snd_mss.
struct Congestion {
  uint64_t retransmits = 0;
  double rttSec = 0;
  double mss = 0;
};

class CoupledWindows {
 public:
  explicit CoupledWindows(CoupledParams p) : p_(p) {}

  // Starts coupling path `slot` (an active path): the first at the ceiling, a later one at the mean window of
  // those coupled now. A path already known keeps its state.
  void add(int slot);
  // The path no longer carries data (re-pathed, quarantined, turned spare).
  void remove(int slot);
  bool has(int slot) const { return paths_.count(slot) != 0; }

  uint64_t window(int slot) const;
  // The path's round trip as last reported (the default until then).
  double rttSec(int slot) const;
  uint64_t total() const;

  // `bytes` delivered on `slot` (acknowledged): the linked increase.
  void acked(int slot, uint64_t bytes);
  // The transport's latest view of `slot`: a retransmission counter above the last one seen is a loss, and
  // halves the window from `inFlight` (the bytes the path holds now), unless it was halved less than a round
  // trip ago. Returns whether the window was lowered.
  bool observe(int slot, const Congestion& c, uint64_t inFlight, Clock::time_point now);
  uint64_t losses() const { return losses_; }

 private:
  struct PathWindow {
    double window = 0;
    double rttSec = 0;
    double mss = 0;
    uint64_t retransmits = 0;
    bool seen = false;  // `retransmits` holds a reading
    Clock::time_point lastDecrease{};
  };
  double alpha() const;

  CoupledParams p_;
  std::map<int, PathWindow> paths_;
  uint64_t losses_ = 0;
};

}  // namespace myriad::mp
