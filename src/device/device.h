// Device: what an executor needs of an accelerator, as stream-ordered operations on memory other processes of
// the host can map. Two implementations stand behind it: the CUDA device (cuda/cuda_device.cc: driver API
// opened at run time, copies by the copy engine, waits and signals as stream memory operations, reductions as
// kernels) and the host-backed device (host_device.h: streams as ordered queues run by one thread, memory in
// memfd-backed shared pages, copies as memcpy, kernels as the __host__ side of the same functors). The CUDA
// executor lowers Schedules to these calls and runs unchanged on either, which is how every algorithm's
// lowering is tested in CI without a GPU.
//
// Rules every implementation keeps (the CUDA stream semantics):
//  - operations on one stream run in the order they were enqueued, each after the previous one finished and
//    its writes are visible to other processes;
//  - waitEvent(s, e) orders s after the most recent record(e, ·) enqueued *before* the waitEvent call (an event
//    may be recorded again at once);
//  - enqueueing never blocks on other ranks: a wait that cannot be satisfied yet blocks its stream only.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "base/status.h"
#include "myriad/myriad.h"

namespace myriad {

struct DeviceStream;  // opaque: a cudaStream_t on CUDA, a queue of the host-backed device
struct DeviceEvent;   // opaque: a cudaEvent_t on CUDA

// Memory another process of the host can map: a POSIX file descriptor (cuMem allocation, memfd), or an opaque
// handle (legacy CUDA IPC). `bytes` is the allocation's size; the importer maps all of it.
struct SharedMemoryHandle {
  int fd = -1;                // owned by whoever holds the handle; -1 when `blob` carries it
  std::vector<uint8_t> blob;  // a handle that travels as bytes
  size_t bytes = 0;
};

class Device {
 public:
  virtual ~Device() = default;
  // "cuda" or "host-backed": names the device in messages and in the perf binaries' header line.
  virtual const char* name() const = 0;
  // One line: the device, its driver, the attributes the executor relies on (myriad-info --devices).
  virtual std::string describe() const = 0;

  // True when `p` points into this device's memory: a call on it is stream-ordered on a device stream.
  virtual bool isDeviceMemory(const void* p) const = 0;
  // Device memory that other processes of the host can map (exportMemory). Zero bytes is an error.
  virtual Result<void*> alloc(size_t bytes) = 0;
  virtual void free(void* p) = 0;
  // A handle to the allocation `p` (returned by alloc) for another process of the host.
  virtual Result<SharedMemoryHandle> exportMemory(void* p) = 0;
  // Maps an exported allocation (taking ownership of its fd) and returns its base here.
  virtual Result<void*> importMemory(SharedMemoryHandle handle) = 0;
  virtual void closeImported(void* p) = 0;

  virtual Result<DeviceStream*> createStream() = 0;
  virtual void destroyStream(DeviceStream* s) = 0;
  virtual Result<DeviceEvent*> createEvent() = 0;
  virtual void destroyEvent(DeviceEvent* e) = 0;
  // Blocks the host until everything enqueued on `s` so far has run.
  virtual Status synchronize(DeviceStream* s) = 0;
  // True when the most recent record of `e` enqueued so far has run (cudaEventQuery), or `e` was never
  // recorded.
  virtual Result<bool> done(DeviceEvent* e) = 0;
  // True while `s` is being captured into a CUDA graph.
  virtual Result<bool> capturing(DeviceStream* s) {
    (void)s;
    return false;
  }
  // The stream's name in the device's own reports (the host-backed device's deadlock report).
  virtual void setName(DeviceStream* s, const std::string& name) { (void)s, (void)name; }

  // ---- stream-ordered operations ----
  virtual Status record(DeviceEvent* e, DeviceStream* s) = 0;
  virtual Status waitEvent(DeviceStream* s, DeviceEvent* e) = 0;
  // The stream waits until *flag >= value. `flag` is 8-byte aligned device memory of this process (its own
  // allocation, not an imported one): waits poll local memory only.
  virtual Status waitFlag(DeviceStream* s, const uint64_t* flag, uint64_t value) = 0;
  // *flag = value once everything before it on the stream is visible to the other processes; `flag` may be
  // an imported peer's memory.
  virtual Status writeFlag(DeviceStream* s, uint64_t* flag, uint64_t value) = 0;
  // Device memory (own or imported) or host memory on either side, as cudaMemcpyAsync under unified
  // addressing; host memory must stay alive until the copy ran. The ranges must not overlap.
  virtual Status copy(DeviceStream* s, void* dst, const void* src, size_t bytes) = 0;
  // dst[i] = a[i] op b[i] for i < count, on device memory (own or imported); dst may alias a or b. myrAvg
  // reduces as a sum.
  virtual Status reduce(DeviceStream* s, void* dst, const void* a, const void* b, size_t count, myrDataType_t dtype,
                        myrRedOp_t op) = 0;
  // buf[i] /= n (the end of an average).
  virtual Status scaleAvg(DeviceStream* s, void* buf, size_t count, myrDataType_t dtype, int n) = 0;

  // ---- from the host, not stream-ordered ----
  // Sets *flag = value now (abort: releases every stream waiting on the flag). `flag` as for waitFlag.
  virtual Status releaseFlag(uint64_t* flag, uint64_t value) = 0;
};

// The device of this process, chosen once by MYRIAD_DEVICE (auto: CUDA when a driver and a GPU are present;
// host-backed; none), or why there is none; probed at the first call and cached. The library loads without a
// driver: the CUDA driver is opened here, at first use, never at load time.
Result<Device*> processDevice();
// processDevice()'s device, or null when there is none (then processDevice() says why): the check every
// collective call makes, one atomic load once the choice is made.
Device* usableDevice();

}  // namespace myriad
