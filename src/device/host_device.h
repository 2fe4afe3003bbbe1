// HostBackedDevice: a Device with CUDA stream semantics that runs on the CPU, so that the executor's lowering
// (which waits, signals, copies and kernels, in which order) is tested without a GPU, across threads and forked
// processes. One worker thread runs every stream's head operation when it can run; memory is memfd pages that
// other processes map. Invariant: nothing passes by luck — fresh memory holds garbage, not zeros, waits are
// checked against exactly the record or value they captured, and a device whose streams all wait with nothing
// running for the stall time turns synchronize() into an error naming what each stream awaits.
#pragma once

#include <sys/types.h>
#include <unistd.h>

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "device/device.h"

namespace myriad {

struct HostDeviceOptions {
  // 0: streams are visited in creation order; else each pass visits the runnable streams in an order drawn
  // from this seed, which shakes out lowerings that rely on one stream happening to run first.
  uint64_t orderSeed = 0;
  // Before each copy, kernel or flag write, sleep a random 0..maxOpDelayUs microseconds (0: never).
  int maxOpDelayUs = 0;
  // Every stream with work blocked on a wait and no operation run for this long: a deadlock, reported.
  std::chrono::milliseconds stallTime{10000};
  // Kernels (reduce, scaleAvg) accept any address, not only this device's memory: for tests that run
  // lowerings over buffers they hold in host memory. Off, a kernel on host memory is refused, as on a GPU.
  bool kernelsOnHostMemory = false;
  // Seed of the garbage that fresh allocations are filled with.
  uint64_t memorySeed = 0x6d79726961642d31;
};

class HostBackedDevice final : public Device {
 public:
  explicit HostBackedDevice(HostDeviceOptions options = {});
  ~HostBackedDevice() override;
  HostBackedDevice(const HostBackedDevice&) = delete;
  HostBackedDevice& operator=(const HostBackedDevice&) = delete;

  const char* name() const override { return "host-backed"; }
  std::string describe() const override;

  bool isDeviceMemory(const void* p) const override;
  Result<void*> alloc(size_t bytes) override;
  void free(void* p) override;
  Result<SharedMemoryHandle> exportMemory(void* p) override;
  Result<void*> importMemory(SharedMemoryHandle handle) override;
  void closeImported(void* p) override;

  Result<DeviceStream*> createStream() override;
  void destroyStream(DeviceStream* s) override;
  Result<DeviceEvent*> createEvent() override;
  void destroyEvent(DeviceEvent* e) override;
  Status synchronize(DeviceStream* s) override;
  Result<bool> done(DeviceEvent* e) override;

  Status record(DeviceEvent* e, DeviceStream* s) override;
  Status waitEvent(DeviceStream* s, DeviceEvent* e) override;
  Status waitFlag(DeviceStream* s, const uint64_t* flag, uint64_t value) override;
  Status writeFlag(DeviceStream* s, uint64_t* flag, uint64_t value) override;
  Status copy(DeviceStream* s, void* dst, const void* src, size_t bytes) override;
  Status reduce(DeviceStream* s, void* dst, const void* a, const void* b, size_t count, myrDataType_t dtype,
                myrRedOp_t op) override;
  Status scaleAvg(DeviceStream* s, void* buf, size_t count, myrDataType_t dtype, int n) override;

  Status releaseFlag(uint64_t* flag, uint64_t value) override;

  // ---- for tests and messages ----
  // The stream's name in stall reports (default "stream N").
  void setName(DeviceStream* s, const std::string& name) override;
  void setStallTime(std::chrono::milliseconds stallTime);
  // The last deadlock report ("" when none was ever made): each blocked stream and what it awaits.
  std::string stallReport() const;
  // False in a process forked from the one that made the device: its worker thread does not exist there.
  bool usableHere() const { return ::getpid() == pid_; }

 private:
  struct Op;
  struct Queue;
  struct Event;
  struct Region {
    size_t bytes = 0;
    int fd = -1;  // the memfd of an allocation; -1 for an imported mapping
  };

  static std::string addressText(const void* p);
  Status checkProcess(const char* what) const;
  // Finds the region holding [p, p + bytes), or nullptr.
  const Region* regionOf(const void* p, size_t bytes) const;  // memMu_ held
  Status checkRange(const char* what, const void* p, size_t bytes) const;
  Status checkFlag(const char* what, const uint64_t* flag, bool ownOnly) const;
  Queue* queueOf(DeviceStream* s) const;  // mu_ held
  Status enqueue(DeviceStream* s, Op op);

  void workerLoop();
  bool runPass(std::unique_lock<std::mutex>& lk);
  bool ready(const Op& op) const;  // mu_ held
  bool anyReady() const;           // mu_ held: some stream's head could run now
  void execute(const Op& op);
  void noteStall();  // mu_ held
  std::string describeWait(const Queue& q) const;

  const HostDeviceOptions options_;
  const pid_t pid_;

  mutable std::mutex memMu_;
  std::map<uintptr_t, Region> regions_;  // base -> region, allocations and imported mappings
  uint64_t allocations_ = 0;

  mutable std::mutex mu_;
  std::condition_variable workCv_;  // the worker: new work, a released flag, stop
  std::condition_variable doneCv_;  // synchronize(): a stream drained, a stall found
  std::vector<std::unique_ptr<Queue>> streams_;
  std::map<Event*, std::shared_ptr<Event>> events_;
  int nextStreamId_ = 0;
  int nextEventId_ = 0;
  bool kicked_ = false;
  bool stop_ = false;
  bool stalled_ = false;
  std::string stallReport_;
  std::chrono::milliseconds stallTime_;
  std::chrono::steady_clock::time_point lastProgress_;
  std::mt19937_64 rng_;  // the worker's only
  std::thread worker_;
};

}  // namespace myriad
