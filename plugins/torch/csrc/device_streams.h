// DeviceStreams: a backend's internal streams, one per CUDA device, on which its works on CUDA tensors are
// enqueued (as ProcessGroupNCCL does). Written against c10's device-generic Stream, Event and guard API, so
// it needs no CUDA header and compiles against a CPU torch too; setup.py's MYRIAD_TORCH_CUDA decides
// whether a build takes CUDA tensors at all. Invariant: an internal stream is ordered after every caller
// stream it was made to wait for (waitForCaller), and Myriad sees it as the cudaStream_t it wraps.
#pragma once

#include <ATen/core/Tensor.h>
#include <c10/core/Device.h>
#include <c10/core/Stream.h>

#include <map>
#include <mutex>
#include <vector>

#include "myriad/myriad.h"

#ifndef MYRIAD_TORCH_CUDA
#define MYRIAD_TORCH_CUDA 0
#endif

namespace torch_myriad {

/// Whether this build takes CUDA tensors: the torch it was built against has CUDA (setup.py).
inline constexpr bool kCudaBuilt = MYRIAD_TORCH_CUDA != 0;

class DeviceStreams {
 public:
  /// The internal stream of `device`, taken from torch's stream pool on its first use.
  c10::Stream internal(c10::Device device);

  /// Makes the internal stream of `device` wait (on the device, not the host) for what the caller's
  /// current stream of that device holds now.
  void waitForCaller(c10::Device device);

  /// Blocks the host until every internal stream has run what it holds.
  void synchronizeAll();

  /// Whether every internal stream has run what it holds (true when there are none).
  bool idle();

 private:
  std::map<c10::DeviceIndex, c10::Stream> snapshot();

  std::mutex mu_;
  std::map<c10::DeviceIndex, c10::Stream> streams_;
};

/// The stream handle Myriad's C API takes for `stream`: its cudaStream_t, as NCCL takes it.
inline myrStream_t asMyriadStream(const c10::Stream& stream) {
  return reinterpret_cast<myrStream_t>(stream.native_handle());
}

/// Tells torch's caching allocator that `stream` uses each tensor's memory, so that memory is not handed
/// out again before what `stream` holds now has run, whenever the tensor is freed.
void recordOnStream(const std::vector<at::Tensor>& tensors, const c10::Stream& stream);

}  // namespace torch_myriad
