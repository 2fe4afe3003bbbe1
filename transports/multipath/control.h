// ControlLoop: the PLB-style decisions of one path set, from measurements only (no I/O, no clock), so tests
// script them. Each round (a few chunk acknowledgements per path) feeds per-path throughput and per-chunk
// service time into EWMAs. A path is bad only relative to its siblings: its service time exceeds 1.5x the
// median of the other active paths (or of a spare scout that shows a faster path exists), or its throughput
// is well under its share while the peer runs below the best rate it has shown; never on absolute congestion.
// Bad for 3 rounds in a row -> re-path: at most one path per round, with probability 1/2, then a hold-down
// (also when no spare was worth moving to: declined()).
// Damping: a re-path is judged when its hold-down ends. Every second re-path in a row that did not raise the
// peer's throughput doubles the hold-down (noise, or a fabric with nothing better to offer, must not make
// paths churn); one that helped resets it. One miss alone is no evidence: a random new port lands on the
// same congested spine as often as not on a two-spine fabric.
#pragma once

#include <cstdint>
#include <map>
#include <random>
#include <vector>

namespace myriad::mp {

struct ControlParams {
  double alpha = 0.3;          // EWMA weight of the newest round
  double latencyFactor = 1.5;  // bad: service time > this x the siblings' median
  double shareFactor = 0.5;    // bad: throughput < this x its share ...
  double lineFraction = 0.9;   // ... while the peer is under this fraction of its best rate
  int badRounds = 3;           // consecutive bad rounds before a re-path
  // Rounds with samples before a path is judged at all: a fresh path's first rounds (slow start, and a
  // retransmission timeout behind an early loss lifts its average for ~7 rounds) say nothing about its path
  // (at 2, a flat fabric re-pathed a healthy path in a third of the runs beside a busy CPU).
  int judgeAfterSamples = 8;
  int holdDownRounds = 6;          // rounds after a re-path in which no other path of the peer moves ...
  int maxBackoff = 4;              // ... doubled (up to 2^this) per 2 re-paths in a row that did not raise
  double gainFactor = 1.05;        // the peer's throughput by this factor by the end of their hold-downs
  double repathProbability = 0.5;  // coin flip per eligible round (desynchronises peers)
  double stallFactor = 8;          // stalled: oldest chunk older than this x the siblings' median ...
  double stallMinSec = 0.25;       // ... and than this
};

struct PathRound {
  int slot = 0;
  bool active = true;              // false: a spare scout (compared against, never re-pathed)
  uint64_t bytes = 0;              // acknowledged this round
  std::vector<double> serviceSec;  // per chunk: time from reaching the head of the lane to its ack
};

struct PathView {
  double throughput = 0;  // bytes/s, EWMA
  double service = 0;     // seconds per chunk, EWMA
  int samples = 0;        // rounds with service samples
  int bad = 0;            // consecutive bad rounds
  bool lastBad = false;
};

class ControlLoop {
 public:
  ControlLoop(ControlParams p, uint64_t seed) : p_(p), rng_(seed) {}

  // One round of `seconds`; returns the slot to re-path now, or -1.
  int round(const std::vector<PathRound>& paths, double seconds);
  // The re-path that round() returned was not made: no spare promised better (the ones measured no faster
  // were re-rolled to fresh ports). That is the same evidence as a re-path that did not help (a fabric with
  // nothing better to offer, or noise): it counts as a miss for the back-off, and the hold-down stands, which
  // also gives the re-rolled spares time to be measured. Without this, on one flat link, noise re-rolled
  // spares every few rounds (36 new connections in a 3 s sweep).
  void declined();
  // A slot that now holds a new path: its history no longer applies.
  void forget(int slot) { views_.erase(slot); }
  const PathView* view(int slot) const;
  // Is a chunk `ageSec` old on `slot` stalled (compared with the other paths)?
  bool stalled(int slot, double ageSec) const;
  int rounds() const { return rounds_; }
  int holdDownNow() const { return p_.holdDownRounds << backoff_; }
  double peerThroughput() const { return peer_; }
  const ControlParams& params() const { return p_; }

 private:
  double siblingsMedian(int slot, const std::vector<PathRound>& paths, bool activeOnly) const;
  // The verdict on the last re-path (or a declined one): a miss unless it helped; every second miss in a row
  // doubles the hold-down.
  void judge(bool helped);

  ControlParams p_;
  std::mt19937_64 rng_;
  std::map<int, PathView> views_;
  double peer_ = 0, peak_ = 0;
  int rounds_ = 0;
  int holdDown_ = 0;
  int misses_ = 0;            // re-paths in a row that did not help
  int backoff_ = 0;           // current hold-down is holdDownRounds << backoff_
  double beforeRepath_ = -1;  // the peer's throughput when the re-path under judgement was made
};

}  // namespace myriad::mp
