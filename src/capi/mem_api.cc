// C API: device memory (myrMemAlloc / myrMemFree) on the process's device.
#include "capi/handles.h"
#include "device/device.h"

extern "C" {

myrResult_t myrMemAlloc(void** ptr, size_t size) {
  using myriad::capi::finish;
  if (!ptr) return finish(nullptr, myriad::invalidArgument("ptr is NULL"), __func__);
  *ptr = nullptr;
  if (size == 0) return finish(nullptr, myriad::invalidArgument("size is 0"), __func__);
  auto device = myriad::processDevice();
  if (!device.isOk()) return finish(nullptr, device.takeStatus().addContext("myrMemAlloc"), __func__);
  auto p = device.value()->alloc(size);
  if (!p.isOk()) return finish(nullptr, p.takeStatus(), __func__);
  *ptr = p.take();
  return myrSuccess;
}

myrResult_t myrMemFree(void* ptr) {
  using myriad::capi::finish;
  if (!ptr) return myrSuccess;
  auto device = myriad::processDevice();
  if (!device.isOk() || !device.value()->isDeviceMemory(ptr))
    return finish(nullptr, myriad::invalidArgument("myrMemFree: not memory of myrMemAlloc"), __func__);
  device.value()->free(ptr);
  return myrSuccess;
}

}  // extern "C"
