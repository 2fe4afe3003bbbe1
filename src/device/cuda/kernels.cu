// The reduction kernels: one template per (dtype, op) over the functors of reduce_op.h, so the GPU computes
// what the host-backed device computes. Grid-stride loops over a bounded grid (4 blocks of 512 threads per
// SM); 16-byte vector loads and stores when every pointer is 16-byte aligned, one element at a time otherwise
// and for the tail.
#include <cuda_runtime.h>

#include <atomic>
#include <cstdint>
#include <cstring>

#include "device/cuda/kernels.h"
#include "device/reduce_op.h"
#include "plan/dtype.h"

namespace myriad {
namespace {

constexpr int kThreads = 512;
constexpr int kBlocksPerSm = 4;
constexpr int kMaxDevices = 64;

template <typename S>
struct Vec {
  static constexpr int kN = 16 / sizeof(S);
  S v[kN];
};

__device__ inline uint4 loadVec(const void* p) {
  return *static_cast<const uint4*>(p);
}

template <myrDataType_t D, typename Op>
__global__ void __launch_bounds__(kThreads)
    reduceKernel(void* dst, const void* a, const void* b, size_t count, bool vector) {
  using S = typename dev::DType<D>::Storage;
  constexpr int kN = Vec<S>::kN;
  auto* out = static_cast<S*>(dst);
  const auto* x = static_cast<const S*>(a);
  const auto* y = static_cast<const S*>(b);
  size_t stride = static_cast<size_t>(gridDim.x) * blockDim.x;
  size_t tid = static_cast<size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  size_t done = 0;
  if (vector) {
    size_t vecs = count / kN;
    for (size_t v = tid; v < vecs; v += stride) {
      uint4 ra = loadVec(x + v * kN), rb = loadVec(y + v * kN);
      Vec<S> ea, eb;
      memcpy(&ea, &ra, 16);
      memcpy(&eb, &rb, 16);
#pragma unroll
      for (int k = 0; k < kN; ++k) ea.v[k] = dev::reduceElem<D, Op>(ea.v[k], eb.v[k]);
      uint4 r;
      memcpy(&r, &ea, 16);
      *reinterpret_cast<uint4*>(out + v * kN) = r;
    }
    done = vecs * kN;
  }
  for (size_t i = done + tid; i < count; i += stride) out[i] = dev::reduceElem<D, Op>(x[i], y[i]);
}

template <myrDataType_t D>
__global__ void __launch_bounds__(kThreads) scaleKernel(void* buf, size_t count, int n, bool vector) {
  using S = typename dev::DType<D>::Storage;
  constexpr int kN = Vec<S>::kN;
  auto* p = static_cast<S*>(buf);
  size_t stride = static_cast<size_t>(gridDim.x) * blockDim.x;
  size_t tid = static_cast<size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  size_t done = 0;
  if (vector) {
    size_t vecs = count / kN;
    for (size_t v = tid; v < vecs; v += stride) {
      uint4 r = loadVec(p + v * kN);
      Vec<S> e;
      memcpy(&e, &r, 16);
#pragma unroll
      for (int k = 0; k < kN; ++k) e.v[k] = dev::scaleElem<D>(e.v[k], n);
      memcpy(&r, &e, 16);
      *reinterpret_cast<uint4*>(p + v * kN) = r;
    }
    done = vecs * kN;
  }
  for (size_t i = done + tid; i < count; i += stride) p[i] = dev::scaleElem<D>(p[i], n);
}

// The current device's SM count, asked once per device.
cudaError_t smCount(int* out) {
  static std::atomic<int> counts[kMaxDevices];
  int dev = 0;
  cudaError_t err = cudaGetDevice(&dev);
  if (err != cudaSuccess) return err;
  if (dev >= 0 && dev < kMaxDevices) {
    int c = counts[dev].load(std::memory_order_relaxed);
    if (c > 0) return *out = c, cudaSuccess;
  }
  int c = 0;
  err = cudaDeviceGetAttribute(&c, cudaDevAttrMultiProcessorCount, dev);
  if (err != cudaSuccess) return err;
  if (dev >= 0 && dev < kMaxDevices) counts[dev].store(c, std::memory_order_relaxed);
  *out = c;
  return cudaSuccess;
}

// Blocks for `items` work items (vectors or elements), at most kBlocksPerSm per SM.
cudaError_t gridFor(size_t items, unsigned* blocks) {
  int sms = 0;
  cudaError_t err = smCount(&sms);
  if (err != cudaSuccess) return err;
  size_t want = (items + kThreads - 1) / kThreads;
  size_t cap = static_cast<size_t>(sms > 0 ? sms : 1) * kBlocksPerSm;
  *blocks = static_cast<unsigned>(want < cap ? want : cap);
  return cudaSuccess;
}

bool aligned16(const void* p) {
  return reinterpret_cast<uintptr_t>(p) % 16 == 0;
}

}  // namespace

// cudaLaunchKernel, not <<<>>>: it returns this launch's error, where cudaGetLastError could return an earlier
// call's.
cudaError_t launchReduce(cudaStream_t stream, void* dst, const void* a, const void* b, size_t count,
                         myrDataType_t dtype, myrRedOp_t op) {
  if (!validDtype(dtype) || !validOp(op)) return cudaErrorInvalidValue;
  if (count == 0) return cudaSuccess;
  bool vector = aligned16(dst) && aligned16(a) && aligned16(b);
  cudaError_t err = cudaSuccess;
  dev::dispatchDType(dtype, [&](auto tag) {
    constexpr myrDataType_t kD = decltype(tag)::value;
    size_t items = vector ? count / Vec<typename dev::DType<kD>::Storage>::kN + 1 : count;
    unsigned blocks = 0;
    err = gridFor(items, &blocks);
    if (err != cudaSuccess) return;
    dev::dispatchOp(op, [&](auto o) {
      void* args[] = {&dst, &a, &b, &count, &vector};
      err = cudaLaunchKernel(reinterpret_cast<const void*>(&reduceKernel<kD, decltype(o)>), dim3(blocks),
                             dim3(kThreads), args, 0, stream);
    });
  });
  return err;
}

cudaError_t launchScaleAvg(cudaStream_t stream, void* buf, size_t count, myrDataType_t dtype, int n) {
  if (!validDtype(dtype) || n == 0) return cudaErrorInvalidValue;
  if (count == 0) return cudaSuccess;
  bool vector = aligned16(buf);
  cudaError_t err = cudaSuccess;
  dev::dispatchDType(dtype, [&](auto tag) {
    constexpr myrDataType_t kD = decltype(tag)::value;
    size_t items = vector ? count / Vec<typename dev::DType<kD>::Storage>::kN + 1 : count;
    unsigned blocks = 0;
    err = gridFor(items, &blocks);
    if (err != cudaSuccess) return;
    void* args[] = {&buf, &count, &n, &vector};
    err = cudaLaunchKernel(reinterpret_cast<const void*>(&scaleKernel<kD>), dim3(blocks), dim3(kThreads), args, 0,
                           stream);
  });
  return err;
}

}  // namespace myriad
