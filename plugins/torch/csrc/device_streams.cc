// DeviceStreams through c10's VirtualGuardImpl: the CUDA guard implementation torch registers does the
// work (cudaEventRecord, cudaStreamWaitEvent, the caching allocator's recordStream) when torch has CUDA.
#include "device_streams.h"

#include <c10/core/Event.h>
#include <c10/core/impl/VirtualGuardImpl.h>

namespace torch_myriad {

c10::Stream DeviceStreams::internal(c10::Device device) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = streams_.find(device.index());
  if (it != streams_.end()) return it->second;
  const c10::impl::VirtualGuardImpl impl(device.type());
  const c10::Stream stream = impl.getStreamFromGlobalPool(device, /*isHighPriority=*/false);
  streams_.emplace(device.index(), stream);
  return stream;
}

void DeviceStreams::waitForCaller(c10::Device device) {
  const c10::impl::VirtualGuardImpl impl(device.type());
  const c10::Stream caller = impl.getStream(device);
  const c10::Stream mine = internal(device);
  if (caller == mine) return;
  // The event may go right after the wait is enqueued: the wait keeps the point it was recorded at.
  c10::Event ready(device.type());
  ready.record(caller);
  ready.block(mine);
}

std::map<c10::DeviceIndex, c10::Stream> DeviceStreams::snapshot() {
  std::lock_guard<std::mutex> lock(mu_);
  return streams_;
}

void DeviceStreams::synchronizeAll() {
  for (const auto& [index, stream] : snapshot()) stream.synchronize();
}

bool DeviceStreams::idle() {
  for (const auto& [index, stream] : snapshot()) {
    if (!stream.query()) return false;
  }
  return true;
}

void recordOnStream(const std::vector<at::Tensor>& tensors, const c10::Stream& stream) {
  const c10::impl::VirtualGuardImpl impl(stream.device_type());
  for (const at::Tensor& t : tensors) {
    if (t.defined() && t.has_storage()) impl.recordDataPtrOnStream(t.storage().data_ptr(), stream);
  }
}

}  // namespace torch_myriad
