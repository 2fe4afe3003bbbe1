// RecordingDevice: a Device over another that emulates CUDA graph capture for the device tier. While
// capturing, stream operations are recorded instead of run (and capturing() says so, so the lowering takes
// its capture path); replay() issues the recorded operations again, in order, as a graph launch does — same
// pointers, same flag values. Everything else goes straight to the inner device.
#pragma once

#include <functional>
#include <vector>

#include "device/device.h"

namespace myriad::devtest {

class RecordingDevice final : public Device {
 public:
  explicit RecordingDevice(Device& inner) : in_(inner) {}
  void beginCapture() { capturing_ = true, log_.clear(); }
  void endCapture() { capturing_ = false; }
  size_t recorded() const { return log_.size(); }
  // Issues every recorded operation again; the first error stops it.
  Status replay();

  const char* name() const override { return in_.name(); }
  std::string describe() const override { return in_.describe(); }
  bool isDeviceMemory(const void* p) const override { return in_.isDeviceMemory(p); }
  Result<void*> alloc(size_t bytes) override { return in_.alloc(bytes); }
  void free(void* p) override { in_.free(p); }
  Result<SharedMemoryHandle> exportMemory(void* p) override { return in_.exportMemory(p); }
  Result<void*> importMemory(SharedMemoryHandle h) override { return in_.importMemory(std::move(h)); }
  void closeImported(void* p) override { in_.closeImported(p); }
  Result<DeviceStream*> createStream() override { return in_.createStream(); }
  void destroyStream(DeviceStream* s) override { in_.destroyStream(s); }
  Result<DeviceEvent*> createEvent() override { return in_.createEvent(); }
  void destroyEvent(DeviceEvent* e) override { in_.destroyEvent(e); }
  Status synchronize(DeviceStream* s) override { return in_.synchronize(s); }
  Result<bool> done(DeviceEvent* e) override { return in_.done(e); }
  Result<bool> capturing(DeviceStream*) override { return capturing_; }
  void setName(DeviceStream* s, const std::string& n) override { in_.setName(s, n); }
  Status releaseFlag(uint64_t* flag, uint64_t value) override { return in_.releaseFlag(flag, value); }

  Status record(DeviceEvent* e, DeviceStream* s) override {
    return op([=, this] { return in_.record(e, s); });
  }
  Status waitEvent(DeviceStream* s, DeviceEvent* e) override {
    return op([=, this] { return in_.waitEvent(s, e); });
  }
  Status waitFlag(DeviceStream* s, const uint64_t* f, uint64_t v) override {
    return op([=, this] { return in_.waitFlag(s, f, v); });
  }
  Status writeFlag(DeviceStream* s, uint64_t* f, uint64_t v) override {
    return op([=, this] { return in_.writeFlag(s, f, v); });
  }
  Status copy(DeviceStream* s, void* d, const void* src, size_t n) override {
    return op([=, this] { return in_.copy(s, d, src, n); });
  }
  Status reduce(DeviceStream* s, void* d, const void* a, const void* b, size_t count, myrDataType_t t,
                myrRedOp_t o) override {
    return op([=, this] { return in_.reduce(s, d, a, b, count, t, o); });
  }
  Status scaleAvg(DeviceStream* s, void* buf, size_t count, myrDataType_t t, int n) override {
    return op([=, this] { return in_.scaleAvg(s, buf, count, t, n); });
  }

 private:
  Status op(std::function<Status()> f) {
    if (!capturing_) return f();
    log_.push_back(std::move(f));
    return Status::ok();
  }
  Device& in_;
  bool capturing_ = false;
  std::vector<std::function<Status()>> log_;
};

inline Status RecordingDevice::replay() {
  for (auto& f : log_) MYR_TRY(f());
  return Status::ok();
}

}  // namespace myriad::devtest
