// QpPaths: the sending side of one rdma connection's QPs as multipath paths. Every QP is a slot of the
// connection's mp::PathKeeper (the path set, the control loop's rounds and the telemetry that tcp lanes
// use too; its UDP source port = the port of its flow label); `active` of them carry data, the others
// are connected spares. Pieces go to the QPs by pull (adaptive: the active QP with the fewest outstanding
// bytes takes the next piece while it is under the cap) or by the static even split (MYRIAD_NET_ADAPTIVE=0).
// Each completion gives a latency sample (post -> CQE); every few completions per path the mp::ControlLoop
// judges a round, and a slot it names is retired (draining, then a spare; its port goes on the tabu list)
// while a spare takes its position (one not tabu, else the one with the lowest latency when last used). No verbs here:
// the connection posts, this decides. Invariant: exactly `active` slots are active whenever the set holds that many
// QPs, and each slot's completions arrive in the order of its posts (an RC send queue completes in order).
#pragma once

#include <cstdint>
#include <deque>
#include <functional>
#include <vector>

#include "base/clock.h"
#include "transports/multipath/path_keeper.h"

namespace myriad {

struct QpPathOptions {
  int active = 1;
  int spares = 2;
  bool adaptive = true;
  size_t capBytes = 512 << 10;  // outstanding bytes per QP above which it takes no new piece (adaptive)
  mp::PortRange ports;          // RoCEv2 source ports: within 49152-65535 (rdmaPortRange)
  uint64_t seed = 1;
  mp::ControlParams control;
  int roundCompletionsPerPath = 8;
};

// MYRIAD_NET_PORTS for RoCEv2: a flow label can only give source ports 0xC000-0xFFFF, so a range is cut
// to that and a listed port outside it is an error.
Result<mp::PortRange> rdmaPortRange(const std::string& text);

class QpPaths {
 public:
  // Opens active + spares slots with ports from options.ports (presets first: the higher rank of a pair
  // passes the lower rank's ports as presets, so both ends hold the same port in every slot).
  explicit QpPaths(QpPathOptions o);

  int slots() const { return keeper_.set().size(); }
  uint16_t port(int slot) const { return keeper_.set().path(slot).port; }
  std::vector<uint16_t> ports() const;
  bool adaptive() const { return o_.adaptive; }
  // The slot holding active position `position` (0 <= position < active).
  int slotAt(int position) const;
  mp::PathState state(int slot) const { return keeper_.set().path(slot).state; }
  size_t outstanding(int slot) const { return stats_[static_cast<size_t>(slot)].outstanding; }

  // The slot for piece `k` of `pieces` of message `seq`, or -1 while none may take it. `room(slot)`: the
  // connection's own limit (send queue depth). Adaptive: pull; static: the k-th even stripe's position.
  int pick(size_t k, size_t pieces, uint32_t seq, const std::function<bool(int)>& room) const;
  void posted(int slot, size_t bytes, Clock::time_point at);
  // The oldest post of `slot` completed.
  void completed(int slot, Clock::time_point at);

  struct Repath {
    int retired = -1;
    int promoted = -1;
  };
  // When a round is due: feeds the control loop; adaptive and a slot named: re-paths it.
  Repath maybeRound(Clock::time_point now);
  bool roundDue() const { return keeper_.roundDue(); }
  int repaths() const { return repaths_; }

  mp::PeerTelemetry telemetry(const std::string& comm, int rank, int peer) const;

 private:
  struct SlotStats {
    std::deque<std::pair<Clock::time_point, size_t>> inflight;  // post time and bytes, oldest first
    size_t outstanding = 0;
  };
  Repath repath(int slot);

  QpPathOptions o_;
  mp::PathKeeper keeper_;
  std::vector<SlotStats> stats_;
  std::deque<int> spares_;  // spare slots, longest spare first
  int repaths_ = 0;
  uint64_t bytes_ = 0, pieces_ = 0;
};

}  // namespace myriad
