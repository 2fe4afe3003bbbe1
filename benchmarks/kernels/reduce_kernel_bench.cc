// reduce_kernel_bench: the reduction kernel (launchReduce, two inputs to one output) against a device-to-device
// cudaMemcpyAsync of the same size, in the same run, as GB/s counted as bytes read plus written (reduce: 3 x
// size, copy: 2 x size) and the reduction's share of the copy's rate. Each number is the median of 20 timed
// launches (events) over 3 rotating buffer sets, so no launch finds its inputs in L2 from the previous one.
// Without a GPU it prints why and exits with 77, so scripts can tell skipped from passed.
// Usage: myriad_reduce_kernel_bench [MiB ...]   (default: 256 1024)
#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "device/cuda/kernels.h"

namespace {

constexpr int kIters = 20;
constexpr int kWarmup = 3;
constexpr int kSets = 3;

struct Buffers {
  void* a = nullptr;
  void* b = nullptr;
  void* dst = nullptr;
};

[[noreturn]] void fail(const char* what, cudaError_t err) {
  std::fprintf(stderr, "reduce_kernel_bench: %s: %s (%s)\n", what, cudaGetErrorName(err), cudaGetErrorString(err));
  std::exit(1);
}

void check(cudaError_t err, const char* what) {
  if (err != cudaSuccess) fail(what, err);
}

// Median milliseconds of kIters launches of `op(set)`, after kWarmup untimed ones.
template <typename Op>
double medianMs(cudaStream_t stream, Op op) {
  cudaEvent_t start, stop;
  check(cudaEventCreate(&start), "cudaEventCreate");
  check(cudaEventCreate(&stop), "cudaEventCreate");
  for (int i = 0; i < kWarmup; ++i) check(op(i % kSets), "warm-up launch");
  std::vector<double> ms;
  for (int i = 0; i < kIters; ++i) {
    check(cudaEventRecord(start, stream), "cudaEventRecord");
    check(op(i % kSets), "timed launch");
    check(cudaEventRecord(stop, stream), "cudaEventRecord");
    check(cudaEventSynchronize(stop), "cudaEventSynchronize");
    float t = 0;
    check(cudaEventElapsedTime(&t, start, stop), "cudaEventElapsedTime");
    ms.push_back(t);
  }
  cudaEventDestroy(start);
  cudaEventDestroy(stop);
  std::sort(ms.begin(), ms.end());
  return (ms[kIters / 2 - 1] + ms[kIters / 2]) / 2;
}

struct Case {
  const char* name;
  myrDataType_t dtype;
  size_t size;
};

}  // namespace

int main(int argc, char** argv) {
  int devices = 0;
  cudaError_t err = cudaGetDeviceCount(&devices);
  if (err != cudaSuccess || devices == 0) {
    std::printf("reduce_kernel_bench: no CUDA device: %s\n",
                err != cudaSuccess ? cudaGetErrorString(err) : "cudaGetDeviceCount found none");
    return 77;
  }
  std::vector<size_t> mibs;
  for (int i = 1; i < argc; ++i) mibs.push_back(std::strtoull(argv[i], nullptr, 10));
  if (mibs.empty()) mibs = {256, 1024};
  cudaDeviceProp prop{};
  check(cudaGetDeviceProperties(&prop, 0), "cudaGetDeviceProperties");
  std::printf("# reduce_kernel_bench on %s (sm_%d%d, %d SMs); GB/s = (bytes read + written) / time, median of %d\n",
              prop.name, prop.major, prop.minor, prop.multiProcessorCount, kIters);
  std::printf("%-9s %-4s %9s %12s %12s %8s\n", "dtype", "op", "MiB", "reduce_GB/s", "copy_GB/s", "%copy");

  cudaStream_t stream;
  check(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), "cudaStreamCreateWithFlags");
  const Case cases[] = {{"float32", myrFloat32, 4},
                        {"bfloat16", myrBfloat16, 2},
                        {"float16", myrFloat16, 2},
                        {"int32", myrInt32, 4},
                        {"fp8e4m3", myrFloat8e4m3, 1}};
  for (size_t mib : mibs) {
    size_t bytes = mib << 20;
    Buffers sets[kSets];
    for (Buffers& s : sets) {
      for (void** p : {&s.a, &s.b, &s.dst}) {
        check(cudaMalloc(p, bytes), "cudaMalloc");
        check(cudaMemset(*p, 0x11, bytes), "cudaMemset");  // small finite values in every format
      }
    }
    double copyMs = medianMs(stream, [&](int i) {
      return cudaMemcpyAsync(sets[i].dst, sets[i].a, bytes, cudaMemcpyDeviceToDevice, stream);
    });
    double copyGbs = 2.0 * static_cast<double>(bytes) / (copyMs * 1e6);
    for (const Case& c : cases) {
      for (myrRedOp_t op : {myrSum, myrMax}) {
        size_t count = bytes / c.size;
        double ms = medianMs(stream, [&](int i) {
          return myriad::launchReduce(stream, sets[i].dst, sets[i].a, sets[i].b, count, c.dtype, op);
        });
        double gbs = 3.0 * static_cast<double>(bytes) / (ms * 1e6);
        std::printf("%-9s %-4s %9zu %12.1f %12.1f %7.1f%%\n", c.name, op == myrSum ? "sum" : "max", mib, gbs, copyGbs,
                    100.0 * gbs / copyGbs);
      }
    }
    for (Buffers& s : sets) {
      cudaFree(s.a);
      cudaFree(s.b);
      cudaFree(s.dst);
    }
  }
  cudaStreamDestroy(stream);
  return 0;
}
