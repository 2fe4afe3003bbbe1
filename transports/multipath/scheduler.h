// PullScheduler: which chunk goes on which lane. Adaptive: one FIFO of chunks, and a lane pulls the next one
// whenever it and the peer are under their bytes-in-flight caps, so a faster lane (acknowledged sooner) carries
// more; once the FIFO is empty, an idle lane may duplicate the oldest chunk stuck on another lane (end-game;
// the first acknowledgement wins). Static: chunks are dealt round-robin to the active lanes at push time
// (an even split, like NCCL's), no duplicates. Invariant: a chunk is in the FIFO, or in flight on at least one
// lane, or acknowledged; never lost when a lane is removed.
#pragma once

#include <cstdint>
#include <deque>
#include <map>
#include <optional>
#include <utility>
#include <vector>

#include "base/clock.h"

namespace myriad::mp {

struct ChunkRef {
  uint64_t op = 0;
  uint32_t index = 0;
  auto operator<=>(const ChunkRef&) const = default;
};

struct SchedulerLimits {
  uint64_t peerBytes = 512 << 10;  // bytes in flight toward the peer, over all lanes
  uint64_t laneBytes = 256 << 10;  // bytes in flight on one active lane
  uint64_t scoutBytes = 1;         // a spare lane: one chunk at a time (any chunk exceeds 1 byte)
  bool adaptive = true;
};

class PullScheduler {
 public:
  explicit PullScheduler(SchedulerLimits limits) : limits_(limits) {}

  void addLane(int lane, bool scout);
  void setScout(int lane, bool scout);
  // The lane's congestion window (coupled_window.h): it holds at most this many bytes in flight, under the
  // lane cap; one chunk when its window is smaller, while the windowed lanes together stay within the sum of
  // their windows (and the scouts' chunks count against that sum). UINT64_MAX: no window (the lane cap alone).
  void setWindow(int lane, uint64_t bytes);
  // Stops feeding the lane; its chunks stay in flight (draining) until acked or the lane is removed.
  void closeLane(int lane);
  // Forgets the lane; its unacknowledged chunks go back to the front of the FIFO (or, static, to the others).
  void removeLane(int lane);

  void push(ChunkRef c, uint64_t bytes);
  // The next chunk for `lane`, now (marked in flight there), or nothing. `dupAfter`: how old a chunk in
  // flight on another lane must be before this lane may duplicate it (end-game).
  std::optional<ChunkRef> pull(int lane, Clock::time_point now, Clock::duration dupAfter);
  struct Acked {
    bool first = false;  // the first acknowledgement of this chunk
    int lane = -1;       // the lane whose copy is credited (the one it was acked on, if it carried it)
    uint64_t bytes = 0;
    Clock::time_point sent;   // when that copy was pulled
    std::vector<int> others;  // other lanes that still hold a copy (to cancel)
  };
  Acked ack(int lane, ChunkRef c);

  uint64_t inFlight() const { return peerInFlight_; }
  uint64_t laneInFlight(int lane) const;
  size_t laneChunks(int lane) const;
  size_t queued() const;
  bool idle() const { return chunks_.empty(); }
  // The oldest chunk in flight on `lane` (for stall detection), or nothing.
  std::optional<Clock::time_point> oldestOn(int lane) const;
  uint64_t duplicates() const { return duplicates_; }

 private:
  struct Copy {
    int lane;
    Clock::time_point sent;
  };
  struct Chunk {
    uint64_t bytes = 0;
    std::vector<Copy> copies;
  };
  struct LaneQ {
    bool scout = false;
    bool open = true;
    uint64_t bytes = 0;
    uint64_t window = UINT64_MAX;
    std::deque<ChunkRef> own;  // static mode: chunks dealt to this lane
    std::vector<ChunkRef> flying;
  };
  LaneQ* lane(int id);
  void fly(int id, LaneQ& l, ChunkRef c, Chunk& ch, Clock::time_point now);
  void land(int id, ChunkRef c, uint64_t bytes);
  bool room(const LaneQ& l, uint64_t bytes) const;

  SchedulerLimits limits_;
  std::map<ChunkRef, Chunk> chunks_;  // every unacknowledged chunk
  std::deque<ChunkRef> fifo_;
  std::map<int, LaneQ> lanes_;
  uint64_t peerInFlight_ = 0;
  uint64_t duplicates_ = 0;
  size_t deal_ = 0;
};

}  // namespace myriad::mp
