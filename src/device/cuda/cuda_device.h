// The CUDA device: the Device interface on the CUDA runtime (linked statically) and driver functions looked up
// at run time, so that nothing links libcuda and the library loads on machines without a driver. A
// DeviceStream* here is a cudaStream_t and a DeviceEvent* a cudaEvent_t (cudaStreamOf/deviceStreamOf convert),
// so an executor can enqueue on the caller's own stream.
#pragma once

#include <driver_types.h>

#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>

#include "base/status.h"
#include "device/device.h"

namespace myriad {

struct CudaDriver;  // the driver entry points (cuda_device.cc)

class CudaDevice : public Device {
 public:
  // How a piece of memory was made, to undo it: cuMem (VMM) mapping, cudaMalloc, or a legacy IPC import.
  enum class Kind { kVmm, kMalloc, kIpc };
  struct Mapping {
    Kind kind = Kind::kMalloc;
    unsigned long long handle = 0;  // CUmemGenericAllocationHandle of an own VMM allocation; 0 otherwise
    size_t bytes = 0;               // mapped size (VMM: rounded to the granularity)
  };
  struct Attributes {
    bool vmm = false;           // CU_DEVICE_ATTRIBUTE_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED
    bool posixFd = false;       // CU_DEVICE_ATTRIBUTE_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR_SUPPORTED
    bool memOps64 = false;      // CU_DEVICE_ATTRIBUTE_CAN_USE_64_BIT_STREAM_MEM_OPS
    bool waitValueNor = false;  // CU_DEVICE_ATTRIBUTE_CAN_USE_STREAM_WAIT_VALUE_NOR
    bool ipcEvents = false;     // CU_DEVICE_ATTRIBUTE_IPC_EVENT_SUPPORTED
  };

  CudaDevice(int ordinal, const CudaDriver* driver, Attributes attributes, std::string description,
             cudaStream_t releaseStream);
  ~CudaDevice() override;
  CudaDevice(const CudaDevice&) = delete;
  CudaDevice& operator=(const CudaDevice&) = delete;

  const char* name() const override { return "cuda"; }
  std::string describe() const override { return description_; }
  int ordinal() const { return ordinal_; }
  const Attributes& attributes() const { return attributes_; }

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
  Result<bool> capturing(DeviceStream* s) override;

  Status record(DeviceEvent* e, DeviceStream* s) override;
  Status waitEvent(DeviceStream* s, DeviceEvent* e) override;
  Status waitFlag(DeviceStream* s, const uint64_t* flag, uint64_t value) override;
  Status writeFlag(DeviceStream* s, uint64_t* flag, uint64_t value) override;
  Status copy(DeviceStream* s, void* dst, const void* src, size_t bytes) override;
  Status reduce(DeviceStream* s, void* dst, const void* a, const void* b, size_t count, myrDataType_t dtype,
                myrRedOp_t op) override;
  Status scaleAvg(DeviceStream* s, void* buf, size_t count, myrDataType_t dtype, int n) override;

  Status releaseFlag(uint64_t* flag, uint64_t value) override;

 private:
  Status bindThread() const;  // makes this device (its primary context) current on the calling thread
  Result<void*> allocVmm(size_t bytes);
  Status unmapVmm(void* p, const Mapping& m);

  int ordinal_;
  const CudaDriver* driver_;
  Attributes attributes_;
  std::string description_;
  cudaStream_t releaseStream_;  // releaseFlag's own stream, of the highest priority
  std::mutex releaseMu_;        // one releaseFlag at a time on releaseStream_
  std::mutex mu_;               // guards the maps
  std::unordered_map<void*, Mapping> allocations_;
  std::unordered_map<void*, Mapping> imports_;
};

inline cudaStream_t cudaStreamOf(DeviceStream* s) {
  return reinterpret_cast<cudaStream_t>(s);
}
inline DeviceStream* deviceStreamOf(cudaStream_t s) {
  return reinterpret_cast<DeviceStream*>(s);
}
inline cudaEvent_t cudaEventOf(DeviceEvent* e) {
  return reinterpret_cast<cudaEvent_t>(e);
}

// The current CUDA device of the calling thread (device 0 unless cudaSetDevice chose another), or why there is
// none: "no CUDA driver: ..." when the runtime cannot use a driver, "no CUDA device: ..." when it finds no GPU.
// Never crashes on a machine without either.
Result<std::unique_ptr<Device>> openCudaDevice();

}  // namespace myriad
