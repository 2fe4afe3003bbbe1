// The CUDA device over the static CUDA runtime. Driver functions (cuMem*, cuStream*Value64) come from
// cudaGetDriverEntryPointByVersion, looked up once, after the runtime found a driver: the library never links
// libcuda. Every CUDA error becomes a Status naming the call, the error and what was being done.
#include "device/cuda/cuda_device.h"

#include <cuda.h>
#include <cudaTypedefs.h>
#include <cuda_runtime_api.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <utility>

#include "device/cuda/kernels.h"

namespace myriad {

// The driver functions this device calls, asked for at the ABI of the CUDA headers this file is compiled with:
// the structs passed (CUmemAllocationProp …) have those headers' layout. The static runtime needs a driver of at
// least that major version anyway.
struct CudaDriver {
  PFN_cuGetErrorName_v6000 getErrorName = nullptr;
  PFN_cuDeviceGet_v2000 deviceGet = nullptr;
  PFN_cuDeviceGetAttribute_v2000 deviceGetAttribute = nullptr;
  PFN_cuMemCreate_v10020 memCreate = nullptr;
  PFN_cuMemRelease_v10020 memRelease = nullptr;
  PFN_cuMemGetAllocationGranularity_v10020 memGetAllocationGranularity = nullptr;
  PFN_cuMemAddressReserve_v10020 memAddressReserve = nullptr;
  PFN_cuMemAddressFree_v10020 memAddressFree = nullptr;
  PFN_cuMemMap_v10020 memMap = nullptr;
  PFN_cuMemUnmap_v10020 memUnmap = nullptr;
  PFN_cuMemSetAccess_v10020 memSetAccess = nullptr;
  PFN_cuMemExportToShareableHandle_v10020 memExportToShareableHandle = nullptr;
  PFN_cuMemImportFromShareableHandle_v10020 memImportFromShareableHandle = nullptr;
  PFN_cuStreamWaitValue64_v11070 streamWaitValue64 = nullptr;
  PFN_cuStreamWriteValue64_v11070 streamWriteValue64 = nullptr;
};

namespace {

constexpr unsigned kDriverAbi = CUDA_VERSION;

Status cudaFailed(cudaError_t err, const std::string& what) {
  return Status(Code::kUnhandledCudaError,
                "cuda: " + what + ": " + cudaGetErrorName(err) + " (" + cudaGetErrorString(err) + ")");
}

Status checkCuda(cudaError_t err, const std::string& what) {
  return err == cudaSuccess ? Status::ok() : cudaFailed(err, what);
}

Status checkDriver(const CudaDriver* d, CUresult r, const std::string& what) {
  if (r == CUDA_SUCCESS) return Status::ok();
  const char* name = nullptr;
  if (d->getErrorName == nullptr || d->getErrorName(r, &name) != CUDA_SUCCESS || name == nullptr) {
    name = "unknown CUresult";
  }
  return Status(Code::kUnhandledCudaError, "cuda: " + what + ": " + name + " (" + std::to_string(r) + ")");
}

template <typename Fn>
Status lookup(const char* symbol, Fn* fn) {
  void* p = nullptr;
  cudaDriverEntryPointQueryResult found = cudaDriverEntryPointSymbolNotFound;
  cudaError_t err = cudaGetDriverEntryPointByVersion(symbol, &p, kDriverAbi, cudaEnableDefault, &found);
  if (err != cudaSuccess) return cudaFailed(err, std::string("looking up the driver function ") + symbol);
  if (found != cudaDriverEntryPointSuccess || p == nullptr) {
    return Status(Code::kUnhandledCudaError, std::string("cuda: the driver has no ") + symbol + " (CUDA " +
                                                 std::to_string(kDriverAbi / 1000) + "." +
                                                 std::to_string(kDriverAbi % 1000 / 10) + " ABI; driver too old?)");
  }
  *fn = reinterpret_cast<Fn>(p);
  return Status::ok();
}

// Looked up once per process; the first failure is kept and reported to every caller.
Result<const CudaDriver*> loadDriver() {
  static const Result<const CudaDriver*> loaded = []() -> Result<const CudaDriver*> {
    static CudaDriver d;
    MYR_TRY(lookup("cuGetErrorName", &d.getErrorName));
    MYR_TRY(lookup("cuDeviceGet", &d.deviceGet));
    MYR_TRY(lookup("cuDeviceGetAttribute", &d.deviceGetAttribute));
    MYR_TRY(lookup("cuMemCreate", &d.memCreate));
    MYR_TRY(lookup("cuMemRelease", &d.memRelease));
    MYR_TRY(lookup("cuMemGetAllocationGranularity", &d.memGetAllocationGranularity));
    MYR_TRY(lookup("cuMemAddressReserve", &d.memAddressReserve));
    MYR_TRY(lookup("cuMemAddressFree", &d.memAddressFree));
    MYR_TRY(lookup("cuMemMap", &d.memMap));
    MYR_TRY(lookup("cuMemUnmap", &d.memUnmap));
    MYR_TRY(lookup("cuMemSetAccess", &d.memSetAccess));
    MYR_TRY(lookup("cuMemExportToShareableHandle", &d.memExportToShareableHandle));
    MYR_TRY(lookup("cuMemImportFromShareableHandle", &d.memImportFromShareableHandle));
    MYR_TRY(lookup("cuStreamWaitValue64", &d.streamWaitValue64));
    MYR_TRY(lookup("cuStreamWriteValue64", &d.streamWriteValue64));
    return static_cast<const CudaDriver*>(&d);
  }();
  return loaded;
}

CUdeviceptr devicePtr(const void* p) {
  return reinterpret_cast<CUdeviceptr>(p);
}

std::string ptrText(const void* p) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%p", p);
  return buf;
}

CUmemAllocationProp vmmProp(int ordinal) {
  CUmemAllocationProp prop{};
  prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
  prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
  prop.location.id = ordinal;
  prop.requestedHandleTypes = CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR;
  return prop;
}

}  // namespace

CudaDevice::CudaDevice(int ordinal, const CudaDriver* driver, Attributes attributes, std::string description,
                       cudaStream_t releaseStream)
    : ordinal_(ordinal),
      driver_(driver),
      attributes_(attributes),
      description_(std::move(description)),
      releaseStream_(releaseStream) {}

CudaDevice::~CudaDevice() {
  // Allocations and imports belong to their owners, who free them; only the device's own stream goes here.
  if (releaseStream_ != nullptr) cudaStreamDestroy(releaseStream_);
}

Status CudaDevice::bindThread() const {
  return checkCuda(cudaSetDevice(ordinal_), "cudaSetDevice(" + std::to_string(ordinal_) + ")");
}

bool CudaDevice::isDeviceMemory(const void* p) const {
  cudaPointerAttributes attr{};
  if (cudaPointerGetAttributes(&attr, p) != cudaSuccess) {
    (void)cudaGetLastError();  // not a pointer CUDA knows: clear the error so that it is not reported later
    return false;
  }
  return attr.type == cudaMemoryTypeDevice || attr.type == cudaMemoryTypeManaged;
}

// ---- memory ----

Result<void*> CudaDevice::alloc(size_t bytes) {
  if (bytes == 0) return invalidArgument("cuda: alloc of 0 bytes");
  MYR_TRY(bindThread());
  // VMM with POSIX file descriptors: memory that exports as an fd (passed over a Unix socket); else cudaMalloc,
  // exported as a legacy IPC handle.
  if (attributes_.vmm && attributes_.posixFd) return allocVmm(bytes);
  void* p = nullptr;
  MYR_TRY(checkCuda(cudaMalloc(&p, bytes), "cudaMalloc of " + std::to_string(bytes) + " bytes"));
  std::lock_guard<std::mutex> lock(mu_);
  allocations_[p] = Mapping{Kind::kMalloc, 0, bytes};
  return p;
}

Result<void*> CudaDevice::allocVmm(size_t bytes) {
  const CudaDriver* d = driver_;
  CUmemAllocationProp prop = vmmProp(ordinal_);
  // The size and the address are multiples of the larger of the two granularities (the minimum one is what
  // cuMemCreate and cuMemMap require, the recommended one what performs).
  size_t minimum = 0, recommended = 0;
  MYR_TRY(checkDriver(d, d->memGetAllocationGranularity(&minimum, &prop, CU_MEM_ALLOC_GRANULARITY_MINIMUM),
                      "cuMemGetAllocationGranularity (minimum)"));
  MYR_TRY(checkDriver(d, d->memGetAllocationGranularity(&recommended, &prop, CU_MEM_ALLOC_GRANULARITY_RECOMMENDED),
                      "cuMemGetAllocationGranularity (recommended)"));
  size_t granularity = std::max(minimum, recommended);
  if (granularity == 0) return Status(Code::kUnhandledCudaError, "cuda: cuMemGetAllocationGranularity reported 0");
  size_t size = (bytes + granularity - 1) / granularity * granularity;
  std::string what = " of " + std::to_string(size) + " bytes (granularity " + std::to_string(granularity) +
                     ") on device " + std::to_string(ordinal_);
  CUmemGenericAllocationHandle handle = 0;
  MYR_TRY(checkDriver(d, d->memCreate(&handle, size, &prop, 0), "cuMemCreate" + what));
  CUdeviceptr ptr = 0;
  Status s = checkDriver(d, d->memAddressReserve(&ptr, size, granularity, 0, 0), "cuMemAddressReserve" + what);
  if (!s.isOk()) {
    d->memRelease(handle);
    return s;
  }
  s = checkDriver(d, d->memMap(ptr, size, 0, handle, 0), "cuMemMap" + what);
  if (s.isOk()) {
    CUmemAccessDesc access{};
    access.location = prop.location;
    access.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
    s = checkDriver(d, d->memSetAccess(ptr, size, &access, 1), "cuMemSetAccess" + what);
    if (!s.isOk()) d->memUnmap(ptr, size);
  }
  if (!s.isOk()) {
    d->memAddressFree(ptr, size);
    d->memRelease(handle);
    return s;
  }
  void* p = reinterpret_cast<void*>(ptr);
  std::lock_guard<std::mutex> lock(mu_);
  allocations_[p] = Mapping{Kind::kVmm, handle, size};
  return p;
}

Status CudaDevice::unmapVmm(void* p, const Mapping& m) {
  CUdeviceptr ptr = devicePtr(p);
  Status s = checkDriver(driver_, driver_->memUnmap(ptr, m.bytes), "cuMemUnmap of " + ptrText(p));
  Status f = checkDriver(driver_, driver_->memAddressFree(ptr, m.bytes), "cuMemAddressFree of " + ptrText(p));
  return s.isOk() ? f : s;
}

void CudaDevice::free(void* p) {
  if (p == nullptr) return;
  Mapping m;
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = allocations_.find(p);
    if (it == allocations_.end()) return;
    m = it->second;
    allocations_.erase(it);
  }
  if (!bindThread().isOk()) return;
  if (m.kind == Kind::kMalloc) {
    (void)cudaFree(p);
    return;
  }
  unmapVmm(p, m).ignore();
  driver_->memRelease(m.handle);
}

Result<SharedMemoryHandle> CudaDevice::exportMemory(void* p) {
  Mapping m;
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = allocations_.find(p);
    if (it == allocations_.end()) {
      return invalidArgument("cuda: exportMemory: " + ptrText(p) + " is not the base of an allocation of this device");
    }
    m = it->second;
  }
  MYR_TRY(bindThread());
  SharedMemoryHandle h;
  h.bytes = m.bytes;
  if (m.kind == Kind::kVmm) {
    int fd = -1;
    MYR_TRY(checkDriver(driver_,
                        driver_->memExportToShareableHandle(&fd, m.handle, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0),
                        "cuMemExportToShareableHandle (POSIX fd) of " + ptrText(p)));
    h.fd = fd;
    return h;
  }
  cudaIpcMemHandle_t ipc;
  MYR_TRY(checkCuda(cudaIpcGetMemHandle(&ipc, p), "cudaIpcGetMemHandle of " + ptrText(p)));
  h.blob.resize(sizeof ipc);
  std::memcpy(h.blob.data(), &ipc, sizeof ipc);
  return h;
}

Result<void*> CudaDevice::importMemory(SharedMemoryHandle handle) {
  Status bound = bindThread();
  if (handle.fd < 0) {
    if (handle.blob.size() != sizeof(cudaIpcMemHandle_t)) {
      return invalidArgument("cuda: importMemory: a handle of neither an fd nor a " +
                             std::to_string(sizeof(cudaIpcMemHandle_t)) + "-byte IPC blob (" +
                             std::to_string(handle.blob.size()) + " bytes)");
    }
    MYR_TRY(bound);
    cudaIpcMemHandle_t ipc;
    std::memcpy(&ipc, handle.blob.data(), sizeof ipc);
    void* p = nullptr;
    MYR_TRY(checkCuda(cudaIpcOpenMemHandle(&p, ipc, cudaIpcMemLazyEnablePeerAccess), "cudaIpcOpenMemHandle"));
    std::lock_guard<std::mutex> lock(mu_);
    imports_[p] = Mapping{Kind::kIpc, 0, handle.bytes};
    return p;
  }
  // The fd is ours from here: closed once imported (the imported handle keeps the memory alive) or on error.
  const CudaDriver* d = driver_;
  CUmemGenericAllocationHandle h = 0;
  CUresult r = bound.isOk()
                   ? d->memImportFromShareableHandle(&h, reinterpret_cast<void*>(static_cast<intptr_t>(handle.fd)),
                                                     CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR)
                   : CUDA_SUCCESS;
  ::close(handle.fd);
  MYR_TRY(bound);
  std::string what = " of " + std::to_string(handle.bytes) + " bytes on device " + std::to_string(ordinal_);
  MYR_TRY(checkDriver(d, r, "cuMemImportFromShareableHandle (POSIX fd)" + what));
  CUdeviceptr ptr = 0;
  Status s = checkDriver(d, d->memAddressReserve(&ptr, handle.bytes, 0, 0, 0), "cuMemAddressReserve" + what);
  if (s.isOk()) {
    s = checkDriver(d, d->memMap(ptr, handle.bytes, 0, h, 0), "cuMemMap" + what);
    if (s.isOk()) {
      CUmemAccessDesc access{};
      access.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
      access.location.id = ordinal_;
      access.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
      s = checkDriver(d, d->memSetAccess(ptr, handle.bytes, &access, 1), "cuMemSetAccess" + what);
      if (!s.isOk()) d->memUnmap(ptr, handle.bytes);
    }
    if (!s.isOk()) d->memAddressFree(ptr, handle.bytes);
  }
  d->memRelease(h);  // the mapping holds the memory from here on
  MYR_TRY(s);
  void* p = reinterpret_cast<void*>(ptr);
  std::lock_guard<std::mutex> lock(mu_);
  imports_[p] = Mapping{Kind::kVmm, 0, handle.bytes};
  return p;
}

void CudaDevice::closeImported(void* p) {
  Mapping m;
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = imports_.find(p);
    if (it == imports_.end()) return;
    m = it->second;
    imports_.erase(it);
  }
  if (!bindThread().isOk()) return;
  if (m.kind == Kind::kIpc) {
    (void)cudaIpcCloseMemHandle(p);
    return;
  }
  unmapVmm(p, m).ignore();
}

// ---- streams and events ----

Result<DeviceStream*> CudaDevice::createStream() {
  MYR_TRY(bindThread());
  cudaStream_t s = nullptr;
  MYR_TRY(checkCuda(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking), "cudaStreamCreateWithFlags"));
  return deviceStreamOf(s);
}

void CudaDevice::destroyStream(DeviceStream* s) {
  if (s != nullptr) (void)cudaStreamDestroy(cudaStreamOf(s));
}

Result<DeviceEvent*> CudaDevice::createEvent() {
  MYR_TRY(bindThread());
  cudaEvent_t e = nullptr;
  MYR_TRY(checkCuda(cudaEventCreateWithFlags(&e, cudaEventDisableTiming), "cudaEventCreateWithFlags"));
  return reinterpret_cast<DeviceEvent*>(e);
}

void CudaDevice::destroyEvent(DeviceEvent* e) {
  if (e != nullptr) (void)cudaEventDestroy(cudaEventOf(e));
}

Status CudaDevice::synchronize(DeviceStream* s) {
  return checkCuda(cudaStreamSynchronize(cudaStreamOf(s)), "cudaStreamSynchronize");
}

Result<bool> CudaDevice::done(DeviceEvent* e) {
  cudaError_t err = cudaEventQuery(cudaEventOf(e));
  if (err == cudaSuccess) return true;
  if (err == cudaErrorNotReady) return false;
  return cudaFailed(err, "cudaEventQuery");
}

Result<bool> CudaDevice::capturing(DeviceStream* s) {
  cudaStreamCaptureStatus status = cudaStreamCaptureStatusNone;
  MYR_TRY(checkCuda(cudaStreamIsCapturing(cudaStreamOf(s), &status), "cudaStreamIsCapturing"));
  return status != cudaStreamCaptureStatusNone;
}

// ---- stream-ordered operations ----

Status CudaDevice::record(DeviceEvent* e, DeviceStream* s) {
  return checkCuda(cudaEventRecord(cudaEventOf(e), cudaStreamOf(s)), "cudaEventRecord");
}

Status CudaDevice::waitEvent(DeviceStream* s, DeviceEvent* e) {
  return checkCuda(cudaStreamWaitEvent(cudaStreamOf(s), cudaEventOf(e), 0), "cudaStreamWaitEvent");
}

Status CudaDevice::waitFlag(DeviceStream* s, const uint64_t* flag, uint64_t value) {
  if (!attributes_.memOps64) {
    return Status(Code::kUnhandledCudaError,
                  "cuda: device " + std::to_string(ordinal_) + " has no 64-bit stream memory operations (waitFlag)");
  }
  // GEQ compares as (int64_t)(*flag - value) >= 0: flags count up, and a wrap after 2^63 steps is harmless.
  return checkDriver(driver_,
                     driver_->streamWaitValue64(cudaStreamOf(s), devicePtr(flag), value, CU_STREAM_WAIT_VALUE_GEQ),
                     "cuStreamWaitValue64 on " + ptrText(flag) + " >= " + std::to_string(value));
}

Status CudaDevice::writeFlag(DeviceStream* s, uint64_t* flag, uint64_t value) {
  if (!attributes_.memOps64) {
    return Status(Code::kUnhandledCudaError,
                  "cuda: device " + std::to_string(ordinal_) + " has no 64-bit stream memory operations (writeFlag)");
  }
  // The default flags keep the memory barrier before the write: what the stream wrote before is visible to
  // whoever sees the flag.
  return checkDriver(
      driver_, driver_->streamWriteValue64(cudaStreamOf(s), devicePtr(flag), value, CU_STREAM_WRITE_VALUE_DEFAULT),
      "cuStreamWriteValue64 of " + std::to_string(value) + " to " + ptrText(flag));
}

Status CudaDevice::copy(DeviceStream* s, void* dst, const void* src, size_t bytes) {
  if (bytes == 0) return Status::ok();
  return checkCuda(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDefault, cudaStreamOf(s)),
                   "cudaMemcpyAsync of " + std::to_string(bytes) + " bytes");
}

Status CudaDevice::reduce(DeviceStream* s, void* dst, const void* a, const void* b, size_t count, myrDataType_t dtype,
                          myrRedOp_t op) {
  return checkCuda(launchReduce(cudaStreamOf(s), dst, a, b, count, dtype, op),
                   "reduction kernel of " + std::to_string(count) + " elements");
}

Status CudaDevice::scaleAvg(DeviceStream* s, void* buf, size_t count, myrDataType_t dtype, int n) {
  return checkCuda(launchScaleAvg(cudaStreamOf(s), buf, count, dtype, n),
                   "average kernel of " + std::to_string(count) + " elements");
}

// A stream memory write on the device's own stream, then a wait for it. Not cuMemcpyHtoD: a copy of 8 bytes
// is not promised to land as one 64-bit store, and a waiter comparing with GEQ could see a torn value; the
// stream write is one 64-bit store. The stream has the highest priority so that it is unlikely to share a
// hardware queue with a stream blocked in a wait (whether it ever does is for the GPU check to show).
Status CudaDevice::releaseFlag(uint64_t* flag, uint64_t value) {
  MYR_TRY(bindThread());
  std::lock_guard<std::mutex> lock(releaseMu_);  // not mu_: a release that hangs must not stop free()
  std::string what = "releaseFlag: cuStreamWriteValue64 of " + std::to_string(value) + " to " + ptrText(flag);
  MYR_TRY(checkDriver(
      driver_, driver_->streamWriteValue64(releaseStream_, devicePtr(flag), value, CU_STREAM_WRITE_VALUE_DEFAULT),
      what));
  return checkCuda(cudaStreamSynchronize(releaseStream_), what + " (cudaStreamSynchronize)");
}

// ---- opening ----

namespace {

bool attribute(const CudaDriver* d, CUdevice dev, CUdevice_attribute a) {
  int v = 0;
  return d->deviceGetAttribute(&v, a, dev) == CUDA_SUCCESS && v != 0;
}

const char* yesNo(bool b) {
  return b ? "yes" : "no";
}

}  // namespace

Result<std::unique_ptr<Device>> openCudaDevice() {
  int count = 0;
  cudaError_t err = cudaGetDeviceCount(&count);
  if (err != cudaSuccess) {
    (void)cudaGetLastError();
    std::string why =
        std::string("cudaGetDeviceCount: ") + cudaGetErrorName(err) + " (" + cudaGetErrorString(err) + ")";
    if (err == cudaErrorNoDevice) return Status(Code::kUnhandledCudaError, "no CUDA device: " + why);
    // The static runtime says "insufficient" both for an old driver and for none at all (no libcuda.so.1).
    if (err == cudaErrorInsufficientDriver) {
      why += "; libcuda.so.1 is missing or older than CUDA " + std::to_string(CUDART_VERSION / 1000) + "." +
             std::to_string(CUDART_VERSION % 1000 / 10);
    }
    return Status(Code::kUnhandledCudaError, "no CUDA driver: " + why);
  }
  if (count == 0) return Status(Code::kUnhandledCudaError, "no CUDA device: cudaGetDeviceCount found none");
  int ordinal = 0;
  MYR_TRY(checkCuda(cudaGetDevice(&ordinal), "cudaGetDevice"));
  MYR_TRY(checkCuda(cudaSetDevice(ordinal), "cudaSetDevice(" + std::to_string(ordinal) + ")"));
  MYR_ASSIGN_OR_RETURN(const CudaDriver* d, loadDriver());
  CUdevice dev = 0;
  MYR_TRY(checkDriver(d, d->deviceGet(&dev, ordinal), "cuDeviceGet(" + std::to_string(ordinal) + ")"));
  CudaDevice::Attributes attrs;
  attrs.vmm = attribute(d, dev, CU_DEVICE_ATTRIBUTE_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED);
  attrs.posixFd = attribute(d, dev, CU_DEVICE_ATTRIBUTE_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR_SUPPORTED);
  attrs.memOps64 = attribute(d, dev, CU_DEVICE_ATTRIBUTE_CAN_USE_64_BIT_STREAM_MEM_OPS);
  attrs.waitValueNor = attribute(d, dev, CU_DEVICE_ATTRIBUTE_CAN_USE_STREAM_WAIT_VALUE_NOR);
  attrs.ipcEvents = attribute(d, dev, CU_DEVICE_ATTRIBUTE_IPC_EVENT_SUPPORTED);

  cudaDeviceProp prop{};
  MYR_TRY(checkCuda(cudaGetDeviceProperties(&prop, ordinal), "cudaGetDeviceProperties"));
  int driverVersion = 0;
  MYR_TRY(checkCuda(cudaDriverGetVersion(&driverVersion), "cudaDriverGetVersion"));
  std::string text = "cuda " + std::to_string(ordinal) + ": " + prop.name + " (sm_" + std::to_string(prop.major) +
                     std::to_string(prop.minor) + ", " + std::to_string(prop.multiProcessorCount) + " SMs), driver " +
                     std::to_string(driverVersion / 1000) + "." + std::to_string(driverVersion % 1000 / 10) + ", VMM " +
                     yesNo(attrs.vmm) + ", POSIX-fd handles " + yesNo(attrs.posixFd) + ", stream mem ops 64-bit " +
                     yesNo(attrs.memOps64) + " (wait NOR " + yesNo(attrs.waitValueNor) + "), IPC events " +
                     yesNo(attrs.ipcEvents);

  int least = 0, greatest = 0;
  MYR_TRY(checkCuda(cudaDeviceGetStreamPriorityRange(&least, &greatest), "cudaDeviceGetStreamPriorityRange"));
  cudaStream_t release = nullptr;
  MYR_TRY(checkCuda(cudaStreamCreateWithPriority(&release, cudaStreamNonBlocking, greatest),
                    "cudaStreamCreateWithPriority (releaseFlag's stream)"));
  return std::unique_ptr<Device>(new CudaDevice(ordinal, d, attrs, std::move(text), release));
}

}  // namespace myriad
