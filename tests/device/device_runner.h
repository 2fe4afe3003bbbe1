// DeviceRunner: one call on every rank of a test communicator, lowered by the device executor
// (exec/device_executor.h) onto one host-backed device (device/host_device.h) in this process. Each rank has
// its DeviceComm and its own stream; channels are linked directly (LocalChannels) instead of by the pair
// handshake, with a seeded inbox shape per rank (1-4 slots of 256 B-64 KiB, so a message is cut into many
// pieces and senders run out of room), and the device visits runnable streams in a seeded order. Invariant:
// nothing passes by luck — a missing signal or a wrong order deadlocks, and the device reports what each
// stream waits for; a wrong piece lands in the wrong place and fails the data check.
#pragma once

#include <map>
#include <memory>
#include <utility>
#include <vector>

#include "core/device_comm.h"
#include "device/host_device.h"
#include "tests/device/recording_device.h"
#include "tests/sim/det_executor.h"

namespace myriad::devtest {

// Every rank's channel blocks in one process: a rank's block for a peer is allocated at the first open of
// either side, its flags zeroed, and both sides link to the two blocks of their pair.
class LocalChannels {
 public:
  LocalChannels(Device& device, std::vector<ChannelLayout> layouts) : dev_(device), layouts_(std::move(layouts)) {}
  ~LocalChannels();
  Result<std::unique_ptr<DeviceChannel>> open(int me, int peer);
  const ChannelLayout& layout(int rank) const { return layouts_[static_cast<size_t>(rank)]; }

 private:
  Result<uint8_t*> block(int owner, int peer);
  Device& dev_;
  std::vector<ChannelLayout> layouts_;
  std::map<std::pair<int, int>, void*> blocks_;
};

class DeviceRunner final : public sim::CallRunner {
 public:
  DeviceRunner(int nranks, uint64_t seed);
  ~DeviceRunner() override;
  Status run(std::vector<sim::RankCall>& calls, sim::RunStats* stats = nullptr) override;
  // Graph capture, emulated (recording_device.h): every rank's call lowered under capture, nothing run;
  // then each replay() runs the recorded operations again and waits for every rank's stream.
  Status capture(std::vector<sim::RankCall>& calls);
  Status replay();
  HostBackedDevice& device() { return dev_; }

 private:
  Status syncAll();
  HostBackedDevice dev_;
  RecordingDevice rec_;
  LocalChannels channels_;
  std::vector<std::unique_ptr<DeviceComm>> comms_;
  std::vector<DeviceStream*> streams_;
};

}  // namespace myriad::devtest
