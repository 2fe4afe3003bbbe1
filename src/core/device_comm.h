// DeviceComm: one communicator's resources on its device — the channels to the peers it exchanged device
// memory with, the internal streams (lanes) and events a stream-ordered executor spreads a call over, device
// scratch memory, and the event that marks the end of its last call. Created at the communicator's first call
// on device memory; nothing here runs anything (src/exec/device_executor.cc does).
//
// A DeviceChannel joins this rank and one peer of its host in both directions, through memory each side
// allocated and the other mapped (transports/cuda_ipc): this rank's `mine` block holds the inbox the peer
// writes its messages into and the flag words the peer writes (`arrived`: pieces it put in the inbox;
// `freed`: pieces of ours it consumed from its inbox; `done`: it finished the call); `theirs` is the same
// block of the peer, mapped here. Every wait polls this rank's own memory; every signal writes the peer's.
// Every call is self-contained: its counts start at 1 and its flags are back at 0 when it ends, so a call
// captured into a CUDA graph replays (its waits are constants). A call ends with two handshakes per
// channel (device_executor.cc): `done` (the peer writes nothing more into our flags), then we clear our
// flags and say `cleared` — the peer starts its next call on the channel only after that, so none of its
// writes can land before our clearing.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <vector>

#include "base/status.h"
#include "device/device.h"

namespace myriad {

// The layout of one side's block: the flag words arrived, freed, done and cleared, each on its own 128-byte
// line, then `slots` inbox slots of `slotBytes` (a multiple of 256).
struct ChannelLayout {
  enum Flag : size_t { kArrived = 0, kFreed = 1, kDone = 2, kCleared = 3 };
  static constexpr size_t kFlagWords = 4;
  static constexpr size_t flagAt(Flag f) { return 128 * static_cast<size_t>(f); }
  static constexpr size_t kInbox = 512;
  uint32_t slots = 0;
  size_t slotBytes = 0;
  size_t bytes() const { return kInbox + slots * slotBytes; }
};

struct DeviceChannel {
  int peer = -1;
  ChannelLayout layout;       // of `mine`: the pieces this rank receives are at most layout.slotBytes
  ChannelLayout peerLayout;   // of `theirs`: the pieces this rank sends
  uint8_t* mine = nullptr;    // this rank's block (allocated here)
  uint8_t* theirs = nullptr;  // the peer's block (mapped here)
  // Within a call, the pieces (of at most one slot) this rank sent to / consumed from the peer so far,
  // counted as they are enqueued: stream order makes the enqueue order the order on the device.
  uint64_t sent = 0, received = 0;
  std::function<void()> release;  // frees `mine` and unmaps `theirs`

  uint64_t* own(ChannelLayout::Flag f) const { return flag(mine, ChannelLayout::flagAt(f)); }
  uint64_t* peers(ChannelLayout::Flag f) const { return flag(theirs, ChannelLayout::flagAt(f)); }
  // Starts a call on this channel: counts from zero.
  void beginCall() { sent = received = 0; }
  // Where piece n (counted from 1) from the peer lies; where our piece n goes.
  uint8_t* inboxSlot(uint64_t piece) const { return slot(mine, layout, piece); }
  uint8_t* peerInboxSlot(uint64_t piece) const { return slot(theirs, peerLayout, piece); }

  DeviceChannel() = default;
  DeviceChannel(const DeviceChannel&) = delete;
  DeviceChannel& operator=(const DeviceChannel&) = delete;
  ~DeviceChannel() {
    if (release) release();
  }

 private:
  static uint64_t* flag(uint8_t* block, size_t at) { return reinterpret_cast<uint64_t*>(block + at); }

 public:
  // Every flag word of a block (to zero a fresh one, or release them all).
  static uint64_t* flagWord(uint8_t* block, size_t i) { return flag(block, 128 * i); }

 private:
  static uint8_t* slot(uint8_t* block, const ChannelLayout& l, uint64_t piece) {
    return block + ChannelLayout::kInbox + ((piece - 1) % l.slots) * l.slotBytes;
  }
};

// Opens the channel to `peer` (collective between the two: both call it for each other).
using DeviceChannelOpener = std::function<Result<std::unique_ptr<DeviceChannel>>(Device& device, int peer)>;

class DeviceComm {
 public:
  DeviceComm(Device& device, int rank, int nranks, DeviceChannelOpener opener);
  ~DeviceComm();
  DeviceComm(const DeviceComm&) = delete;
  DeviceComm& operator=(const DeviceComm&) = delete;

  Device& device() { return device_; }
  int rank() const { return rank_; }
  int nranks() const { return nranks_; }
  // The channel to `peer`, opened on first use.
  Result<DeviceChannel*> channel(int peer);
  bool hasChannel(int peer) const { return channels_[static_cast<size_t>(peer)] != nullptr; }
  // Internal stream number `i`, created on first use (then *created is set) and kept.
  Result<DeviceStream*> lane(size_t i, bool* created = nullptr);
  // Event number `i` of the pool, created on first use and kept. A call may use each once per call.
  Result<DeviceEvent*> event(size_t i);
  // At least `bytes` of device memory. A larger request allocates anew; earlier blocks stay until the
  // communicator is destroyed, since calls already enqueued may still use them.
  Result<uint8_t*> scratch(size_t bytes);
  bool scratchFits(size_t bytes) const { return !scratch_.empty() && bytes <= scratchBytes_; }
  // The event recorded at the end of every call: the next call, on whatever stream, starts after the last
  // one's record, so a communicator's calls never overlap on the device (they share channels and scratch).
  Result<DeviceEvent*> endEvent();
  bool ranBefore() const { return ranBefore_.load(std::memory_order_acquire); }
  // True when a call was enqueued and has not finished on the device yet.
  bool busy();
  void markRan() { ranBefore_.store(true, std::memory_order_release); }
  // Releases every wait of every channel (abort): the flags this rank waits on jump past any value a call
  // can wait for, so no stream stays blocked on a dead peer.
  void releaseWaits();
  // The peers of the channels opened so far (for liveness checks); safe from any thread.
  std::vector<int> channelPeers() const;

 private:
  Device& device_;
  int rank_, nranks_;
  DeviceChannelOpener opener_;
  std::vector<std::unique_ptr<DeviceChannel>> channels_;  // by rank
  mutable std::mutex openMu_;                             // open_ against the watch and abort threads
  std::vector<DeviceChannel*> open_;
  std::vector<DeviceStream*> lanes_;
  std::vector<DeviceEvent*> events_;
  std::vector<void*> scratch_;  // every block ever allocated; the last is the current one
  size_t scratchBytes_ = 0;
  DeviceEvent* end_ = nullptr;
  std::atomic<bool> ranBefore_{false};  // read by the communicator's device watch
};

}  // namespace myriad
