#include "core/device_comm.h"

#include <string>
#include <thread>

#include "base/clock.h"
#include "base/log.h"

namespace myriad {

namespace {
// Past any count of pieces a communicator can send: a wait on a released flag is always satisfied.
constexpr uint64_t kReleased = uint64_t{1} << 62;
}  // namespace

DeviceComm::DeviceComm(Device& device, int rank, int nranks, DeviceChannelOpener opener)
    : device_(device), rank_(rank), nranks_(nranks), opener_(std::move(opener)) {
  channels_.resize(static_cast<size_t>(nranks));
}

DeviceComm::~DeviceComm() {
  // Whatever is still enqueued may use channels and scratch: let it finish (or fail) first. (After a peer
  // died the communicator released the waits, so this returns.) The lanes first, then the caller's stream,
  // which carries the end of each call (the channels' closing handshake) up to the end event.
  for (DeviceStream* s : lanes_)
    if (s) device_.synchronize(s).ignore();
  auto deadline = Clock::now() + std::chrono::seconds(10);
  while (busy() && Clock::now() < deadline) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  if (busy()) {
    // Freeing memory a stream may still write would corrupt whatever reuses it: leak it instead.
    MYR_LOG(kWarn, kColl, rank_, "device work of a destroyed communicator did not finish in 10 s; its memory is left");
    for (auto& c : channels_)
      if (c) c->release = nullptr;
    scratch_.clear();
  }
  channels_.clear();
  for (DeviceStream* s : lanes_)
    if (s) device_.destroyStream(s);
  for (DeviceEvent* e : events_)
    if (e) device_.destroyEvent(e);
  if (end_) device_.destroyEvent(end_);
  for (void* p : scratch_) device_.free(p);
}

Result<DeviceChannel*> DeviceComm::channel(int peer) {
  if (peer < 0 || peer >= nranks_ || peer == rank_)
    return internalError("rank " + std::to_string(rank_) + ": no device channel to rank " + std::to_string(peer));
  auto& slot = channels_[static_cast<size_t>(peer)];
  if (!slot) {
    MYR_ASSIGN_OR_RETURN(slot, opener_(device_, peer));
    std::lock_guard<std::mutex> lock(openMu_);
    open_.push_back(slot.get());
  }
  return slot.get();
}

Result<DeviceStream*> DeviceComm::lane(size_t i, bool* created) {
  if (created) *created = false;
  if (i >= lanes_.size()) lanes_.resize(i + 1, nullptr);
  if (!lanes_[i]) {
    MYR_ASSIGN_OR_RETURN(lanes_[i], device_.createStream());
    if (created) *created = true;
  }
  return lanes_[i];
}

Result<DeviceEvent*> DeviceComm::event(size_t i) {
  if (i >= events_.size()) events_.resize(i + 1, nullptr);
  if (!events_[i]) {
    MYR_ASSIGN_OR_RETURN(events_[i], device_.createEvent());
  }
  return events_[i];
}

Result<DeviceEvent*> DeviceComm::endEvent() {
  if (!end_) {
    MYR_ASSIGN_OR_RETURN(end_, device_.createEvent());
  }
  return end_;
}

Result<uint8_t*> DeviceComm::scratch(size_t bytes) {
  if (bytes > scratchBytes_ || scratch_.empty()) {
    size_t want = bytes < 4096 ? 4096 : bytes;
    MYR_ASSIGN_OR_RETURN(void* p, device_.alloc(want));
    scratch_.push_back(p);
    scratchBytes_ = want;
  }
  return static_cast<uint8_t*>(scratch_.back());
}

bool DeviceComm::busy() {
  if (!ranBefore()) return false;  // end_ exists once a call was enqueued
  auto finished = device_.done(end_);
  return !finished.isOk() || !finished.value();
}

std::vector<int> DeviceComm::channelPeers() const {
  std::lock_guard<std::mutex> lock(openMu_);
  std::vector<int> out;
  for (const DeviceChannel* c : open_) out.push_back(c->peer);
  return out;
}

void DeviceComm::releaseWaits() {
  std::lock_guard<std::mutex> lock(openMu_);
  for (DeviceChannel* c : open_) {
    for (size_t i = 0; i < ChannelLayout::kFlagWords; ++i)
      device_.releaseFlag(DeviceChannel::flagWord(c->mine, i), kReleased).ignore();
  }
}

}  // namespace myriad
