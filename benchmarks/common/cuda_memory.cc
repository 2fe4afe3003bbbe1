// CUDA device memory for the perf binaries (CUDA builds only), through CUDA's own runtime: cudaSetDevice, a
// non-blocking cudaStream_t per rank handed to the collectives as myrStream_t (the C API's contract for device
// buffers), cudaMalloc or myrMemAlloc buffers, and copies to and from host images waited for on that stream.
// The library keeps its own static CUDA runtime; both find the device through the context current on the thread.
#include <cuda_runtime.h>

#include <algorithm>
#include <vector>

#include "benchmarks/common/device_memory.h"

namespace myriad::bench {
namespace {

std::string cudaText(const std::string& call, cudaError_t err) {
  return call + ": " + cudaGetErrorName(err) + " (" + cudaGetErrorString(err) + ")";
}

bool check(cudaError_t err, const std::string& call, std::string* error) {
  if (err == cudaSuccess) return true;
  *error = cudaText(call, err);
  return false;
}

class CudaMemory : public RankMemory {
 public:
  ~CudaMemory() override {
    for (const Buffer& b : buffers_) {
      if (b.libraryAlloc) {
        (void)myrMemFree(b.p);
      } else {
        (void)cudaFree(b.p);
      }
    }
    if (stream_ != nullptr) (void)cudaStreamDestroy(stream_);
  }
  MemoryKind kind() const override { return MemoryKind::kCuda; }
  bool open(int localRank, std::string* error) override {
    int count = 0;
    if (!check(cudaGetDeviceCount(&count), "cudaGetDeviceCount", error)) return false;
    if (count <= 0) {
      *error = "cudaGetDeviceCount found no CUDA device";
      return false;
    }
    device_ = std::max(localRank, 0) % count;
    const std::string which = "(" + std::to_string(device_) + ")";
    if (!check(cudaSetDevice(device_), "cudaSetDevice" + which, error)) return false;
    cudaDeviceProp prop{};
    if (!check(cudaGetDeviceProperties(&prop, device_), "cudaGetDeviceProperties" + which, error)) return false;
    name_ = prop.name;
    return check(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking), "cudaStreamCreateWithFlags", error);
  }
  unsigned char* allocate(size_t bytes, bool libraryAlloc, std::string* error) override {
    bytes = std::max<size_t>(bytes, 1);
    void* p = nullptr;
    const std::string what = " of " + std::to_string(bytes) + " bytes on device " + std::to_string(device_);
    if (libraryAlloc) {
      const myrResult_t res = myrMemAlloc(&p, bytes);
      if (res != myrSuccess) {
        *error = "myrMemAlloc" + what + " failed: " + myrGetErrorString(res) + ": " + myrGetLastError(nullptr);
        return nullptr;
      }
    } else if (!check(cudaMalloc(&p, bytes), "cudaMalloc" + what, error)) {
      return nullptr;
    }
    buffers_.push_back({p, libraryAlloc});
    if (!check(cudaMemsetAsync(p, 0, bytes, stream_), "cudaMemsetAsync", error) || !sync(error)) return nullptr;
    return static_cast<unsigned char*>(p);
  }
  bool upload(void* buffer, const void* host, size_t bytes, std::string* error) override {
    if (bytes == 0) return true;
    return check(cudaMemcpyAsync(buffer, host, bytes, cudaMemcpyHostToDevice, stream_), "cudaMemcpyAsync to the device",
                 error) &&
           sync(error);
  }
  bool download(void* host, const void* buffer, size_t bytes, std::string* error) override {
    if (bytes == 0) return true;
    return check(cudaMemcpyAsync(host, buffer, bytes, cudaMemcpyDeviceToHost, stream_),
                 "cudaMemcpyAsync from the device", error) &&
           sync(error);
  }
  myrStream_t stream() const override { return reinterpret_cast<myrStream_t>(stream_); }
  bool sync(std::string* error) override {
    return check(cudaStreamSynchronize(stream_), "cudaStreamSynchronize", error);
  }
  int device() const override { return device_; }
  std::string deviceName() const override { return name_; }

 private:
  struct Buffer {
    void* p;
    bool libraryAlloc;
  };
  int device_ = -1;
  std::string name_;
  cudaStream_t stream_ = nullptr;
  std::vector<Buffer> buffers_;
};

}  // namespace

CudaProbe probeCudaHere() {
  CudaProbe p;
  int count = 0;
  const cudaError_t err = cudaGetDeviceCount(&count);
  if (err != cudaSuccess) {
    const char* what = err == cudaErrorInsufficientDriver ? "no CUDA driver, or one older than this CUDA runtime"
                       : err == cudaErrorNoDevice         ? "no CUDA device"
                                                          : "no usable CUDA device";
    p.reason = std::string(what) + " (" + cudaText("cudaGetDeviceCount", err) + ")";
    return p;
  }
  if (count <= 0) {
    p.reason = "no CUDA device (cudaGetDeviceCount found none)";
    return p;
  }
  cudaDeviceProp prop{};
  if (cudaGetDeviceProperties(&prop, 0) == cudaSuccess) p.name = prop.name;
  p.devices = count;
  return p;
}

std::unique_ptr<RankMemory> makeCudaMemory() {
  return std::make_unique<CudaMemory>();
}

}  // namespace myriad::bench
