// processDevice(): the device of this process, chosen once by MYRIAD_DEVICE; the answer, a device or the error
// why there is none, never changes within a process. A process forked after the choice chooses again: neither
// the host-backed device's worker thread nor a CUDA context survives fork().
#include <pthread.h>
#include <unistd.h>

#include <atomic>
#include <memory>
#include <mutex>

#include "base/config.h"
#include "device/device.h"
#include "device/host_device.h"
#ifdef MYRIAD_HAVE_CUDA
#include "device/cuda/cuda_device.h"
#endif

namespace myriad {
namespace {

struct Choice {
  pid_t pid = 0;             // the process that chose; 0: nobody yet
  Device* device = nullptr;  // lives as long as the process (as a CUDA context does); never deleted
  Status error;
};

std::mutex gMutex;
Choice gChoice;
// The fast path of every collective call (usableDevice): set once this process has chosen, cleared in a
// forked child (pthread_atfork), so a call costs one atomic load, not a syscall and a lock.
std::atomic<bool> gChosen{false};
std::atomic<Device*> gDevice{nullptr};

Result<Device*> openCuda() {
#ifdef MYRIAD_HAVE_CUDA
  auto cuda = openCudaDevice();
  if (!cuda.isOk()) return cuda.takeStatus();
  return cuda.take().release();
#else
  return invalidUsage("no device: built without CUDA (configure with -DMYRIAD_WITH_CUDA=ON)");
#endif
}

Result<Device*> choose() {
  auto config = Config::fromEnv();
  if (!config.isOk()) return config.takeStatus();
  const std::string& which = config.value().device;
  if (which == "none") return invalidUsage("no device: MYRIAD_DEVICE=none");
  if (which == "host") return static_cast<Device*>(new HostBackedDevice());
  return openCuda();  // auto and cuda: CUDA or why not
}

}  // namespace

Result<Device*> processDevice() {
  // A fork while another thread chooses must not leave the child's copy of the lock held; the child chooses
  // again.
  static const int registered = pthread_atfork([] { gMutex.lock(); }, [] { gMutex.unlock(); },
                                               [] {
                                                 gChosen.store(false);
                                                 gDevice.store(nullptr);
                                                 gMutex.unlock();
                                               });
  (void)registered;
  std::lock_guard<std::mutex> lk(gMutex);
  if (gChoice.pid != ::getpid()) {
    auto chosen = choose();
    gChoice.pid = ::getpid();
    gChoice.device = chosen.isOk() ? chosen.value() : nullptr;
    gChoice.error = chosen.takeStatus();
    gDevice.store(gChoice.device, std::memory_order_release);
    gChosen.store(true, std::memory_order_release);
  }
  if (gChoice.device == nullptr) return gChoice.error;
  return gChoice.device;
}

Device* usableDevice() {
  if (gChosen.load(std::memory_order_acquire)) return gDevice.load(std::memory_order_acquire);
  auto d = processDevice();
  return d.isOk() ? d.value() : nullptr;
}

}  // namespace myriad
