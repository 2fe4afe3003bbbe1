// FlightRecorder: what one communicator did lately — a fixed ring of its last N calls (MYRIAD_FLIGHT_RECORD;
// 0 keeps no ring) — and what it does now: the call it is in and whom that call waits on. Calls are numbered
// from 1 in the order they execute, whether or not the ring is kept. Thread-safe: calls begin and end on one
// thread at a time (under the execution mutex), while state() and snapshot() may be read from any other.
// After the ring's slots have been used once, recording a call allocates nothing but its error text.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <mutex>
#include <string>
#include <vector>

#include "base/clock.h"
#include "base/status.h"
#include "myriad/myriad.h"

namespace myriad {

struct CollArgs;
class Schedule;

// What this rank is doing on this communicator, for liveness and stall reports.
struct CallState {
  uint64_t seq = 0;     // the last call entered (0: none yet)
  bool inCall = false;  // inside call `seq` now (entered, not finished)
  const char* op = "";  // static: "allreduce", "broadcast", ... (collName), "alltoallv", "send", "recv", "sendrecv"
  size_t count = 0;
  myrDataType_t dtype = myrFloat32;  // dtypeName() (plan/dtype.h) prints it
  // When call `seq` was entered, and finished if !inCall: Clock's time base at the resolution of a kernel
  // tick (1-4 ms, CLOCK_MONOTONIC_COARSE), as are a record's start and finish.
  Clock::time_point entered{};
  Clock::time_point finished{};
};

// Whom the current call waits on: the peer it has been silent with the longest, as the stall checks see it.
struct WaitState {
  int peer = -1;              // -1: waits on nobody (or not for long enough to be noted)
  Clock::time_point since{};  // silent since
};

// The planned traffic of one call with one peer, summed over the steps of its schedule (the first stage of
// a two-stage plan only).
struct PeerBytes {
  int peer = 0;
  uint64_t sendBytes = 0;
  uint64_t recvBytes = 0;
};

struct CallRecord {
  uint64_t seq = 0;
  const char* op = "";
  size_t count = 0;
  myrDataType_t dtype = myrFloat32;
  myrRedOp_t redop = myrSum;
  int root = -1;               // -1: the collective has no root
  const char* algorithm = "";  // registry name, static
  bool device = false;         // device memory: `finished` is when the call was enqueued, not when it ran
  std::vector<PeerBytes> peers;
  Clock::time_point start{}, finished{};
  bool open = true;            // entered, not finished
  Code code = Code::kSuccess;  // how it finished
  std::string error;           // its message when it failed
  WaitState lastWait;          // the last wait noted during the call (kept after it ends)
};

// A consistent copy of everything, for dumps.
struct FlightSnapshot {
  int capacity = 0;
  CallState state;
  WaitState wait;                   // of the current call (peer -1 when not in one)
  std::vector<CallRecord> records;  // oldest first
};

class FlightRecorder {
 public:
  // `capacity` calls are kept (0: none); `nranks` sizes the per-peer sums.
  FlightRecorder(int capacity, int nranks);

  // A call starts executing; returns its number.
  uint64_t begin(const CollArgs& args, const char* algorithm, bool device);
  // The schedule the call runs: the peers it talks to and the bytes planned with each.
  void planned(uint64_t seq, const Schedule& schedule);
  void end(uint64_t seq, const Status& s);
  // The current call has been silent with `peer` for `silentMs`; clearWait: bytes move again.
  void noteWait(int peer, long long silentMs);
  void clearWait();

  CallState state() const;
  WaitState wait() const;  // of the current call; peer -1 outside calls
  FlightSnapshot snapshot() const;
  int capacity() const { return static_cast<int>(ring_.size()); }

 private:
  CallRecord* slotOf(uint64_t seq);  // the ring slot of call `seq`, or null (ring off, or overwritten)

  mutable std::mutex mu_;
  std::vector<CallRecord> ring_;  // slot (seq - 1) % capacity
  CallState state_;
  WaitState wait_;
  std::atomic<bool> waiting_{false};  // read without the lock by clearWait's fast path, written under it
  // planned(): per-peer sums and marks, indexed by rank, and the ranks touched, in first-touch order (kept
  // between calls: no allocation).
  std::vector<PeerBytes> byPeer_;
  std::vector<uint8_t> seen_;
  std::vector<int> touched_;
};

}  // namespace myriad
