// PathKeeper: the measuring and judging half of a path set, shared by every transport that spreads one
// connection over several paths (tcp lanes, rdma QPs). It owns the PathSet (slots, ports, states, tabu
// list) and the ControlLoop, counts each path's bytes and service-time samples, closes a round once every
// active path has given about `samplesPerPath` samples (the loop's verdict names a slot to re-path, or
// none), and describes the paths for telemetry. What a re-path does (open a lane from a fresh port, or
// promote a connected spare QP) and which spare takes the place are the transport's: the keeper neither
// opens nor closes anything. No I/O; the clock is read only to time rounds.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "base/clock.h"
#include "transports/multipath/control.h"
#include "transports/multipath/path_set.h"
#include "transports/multipath/telemetry.h"

namespace myriad::mp {

// Where a re-path of a slow path goes (PathKeeper::chooseSpare). `take`: the spare its position moves to, or
// -1 (nothing moves this decision). `behind`: the measured spares no faster than the slow path, with their
// seconds per chunk: they sit behind the same bottleneck and are given fresh ports.
struct SpareChoice {
  int take = -1;
  std::vector<std::pair<int, double>> behind;
  double slowService = 0;  // the slow path's seconds per chunk
};

struct PathKeeperOptions {
  int active = 1;
  int spares = 0;
  PortRange ports;
  uint64_t seed = 1;
  ControlParams control;
  int samplesPerPath = 8;  // a round closes after this many samples per active path
  bool adaptive = true;    // false: rounds measure (telemetry) but name nothing
  bool scouts = false;     // spares carry data now and then: their samples are compared against
};

class PathKeeper {
 public:
  explicit PathKeeper(PathKeeperOptions o);

  PathSet& set() { return set_; }
  const PathSet& set() const { return set_; }
  const ControlLoop& control() const { return ctl_; }
  ControlLoop& control() { return ctl_; }
  const PathView* view(int slot) const { return ctl_.view(slot); }

  // A piece of `bytes` on `slot` was served in `seconds` (posted to acknowledged or completed).
  void served(int slot, uint64_t bytes, double seconds);
  // Bytes delivered on `slot` without a service sample of their own (acknowledged in a batch).
  void counted(int slot, uint64_t bytes);
  uint64_t bytes(int slot) const { return stat(slot).bytes; }
  const LatencyWindow& latency(int slot) const { return stat(slot).latency; }

  // The first round starts at `now` (by default when the keeper was made): a caller on another clock (the
  // simulator's virtual time) sets it.
  void startRoundAt(Clock::time_point now) { roundStart_ = now; }
  bool roundDue() const;
  // Closes the round if it is due: every active path's (and scouting spare's) bytes and samples go to the
  // control loop. Returns the slot it names slow (adaptive only), or -1.
  int maybeRound(Clock::time_point now);
  // The slot the last round's verdict named slow, whether or not the keeper is adaptive (-1: none).
  int lastNamed() const { return lastNamed_; }
  // Every round for at least `rounds` rounds and `seconds` found the active paths alike: none behind its
  // siblings for two rounds in a row, none named. On a fabric without collisions, or one that spreads
  // packets itself, that is the steady state.
  bool calmFor(int rounds, double seconds, Clock::time_point now) const;
  bool adaptive() const { return o_.adaptive; }
  void setAdaptive(bool on) { o_.adaptive = on; }
  // Where the slow path `slot` should move: the fastest measured spare that serves its chunks at least
  // `gain` x faster, else a spare not measured yet (a coin flip on most fabrics, no worse than staying).
  // Measured spares no faster than that are `behind` it. All of them are re-rolled in one decision: a path
  // set whose paths and spares all sit on an elephant's spine explores only that way, and one re-roll per
  // decision halved what it moved off the elephant's spine (docs/design/multipath.md).
  SpareChoice chooseSpare(int slot, double gain) const;
  // A slot now holds another path (re-pathed, re-rolled, quarantined): its history no longer applies.
  void forget(int slot) { ctl_.forget(slot); }

  // The paths and the loop's counters; the caller fills in what only it knows (transport, peer, bytes...).
  void describe(PeerTelemetry* t, bool skipUnusedClosed) const;

 private:
  struct Stat {
    uint64_t bytes = 0, roundBytes = 0;
    std::vector<double> roundService;
    LatencyWindow latency;
  };
  Stat& stat(int slot);
  const Stat& stat(int slot) const;

  PathKeeperOptions o_;
  PathSet set_;
  ControlLoop ctl_;
  mutable std::vector<Stat> stats_;  // by slot, grown as the set grows
  Clock::time_point roundStart_ = Clock::now();
  int roundSamples_ = 0;
  int lastNamed_ = -1;
  int calmRounds_ = 0;
  Clock::time_point calmSince_{};
};

}  // namespace myriad::mp
