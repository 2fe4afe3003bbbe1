// HostBackedDevice's memory: each allocation its own memfd, mapped shared, filled with seeded garbage; a
// registry of allocations and imported mappings (base -> size) answers isDeviceMemory and checks that every
// operation's ranges lie inside one of them, as a GPU's would have to.
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>

#include "device/host_device.h"

namespace myriad {
namespace {

uint64_t splitmix(uint64_t& state) {
  uint64_t z = (state += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

// What uninitialised GPU memory looks like to a program that forgets to write it: not zeros.
void fillGarbage(void* p, size_t bytes, uint64_t seed) {
  auto* words = static_cast<uint64_t*>(p);
  for (size_t i = 0; i < bytes / 8; ++i) words[i] = splitmix(seed);
}

}  // namespace

const HostBackedDevice::Region* HostBackedDevice::regionOf(const void* p, size_t bytes) const {
  auto addr = reinterpret_cast<uintptr_t>(p);
  auto it = regions_.upper_bound(addr);
  if (it == regions_.begin()) return nullptr;
  --it;
  if (addr - it->first >= it->second.bytes || bytes > it->second.bytes - (addr - it->first)) return nullptr;
  return &it->second;
}

bool HostBackedDevice::isDeviceMemory(const void* p) const {
  std::lock_guard<std::mutex> lk(memMu_);
  return regionOf(p, 1) != nullptr;
}

Result<void*> HostBackedDevice::alloc(size_t bytes) {
  MYR_TRY(checkProcess("alloc"));
  if (bytes == 0) return invalidArgument("host-backed device: alloc of 0 bytes");
  size_t page = static_cast<size_t>(::sysconf(_SC_PAGESIZE));
  size_t rounded = (bytes + page - 1) / page * page;
  int fd = ::memfd_create("myriad-device", MFD_CLOEXEC);
  if (fd < 0) return systemError("host-backed device: memfd_create", errno);
  if (::ftruncate(fd, static_cast<off_t>(rounded)) != 0) {
    int err = errno;
    ::close(fd);
    return systemError("host-backed device: ftruncate of a memfd to " + std::to_string(rounded) + " bytes", err);
  }
  void* p = ::mmap(nullptr, rounded, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  if (p == MAP_FAILED) {
    int err = errno;
    ::close(fd);
    return systemError("host-backed device: mmap of " + std::to_string(rounded) + " bytes", err);
  }
  uint64_t index = 0;
  {
    std::lock_guard<std::mutex> lk(memMu_);
    index = ++allocations_;
  }
  fillGarbage(p, rounded, options_.memorySeed ^ (index * 0xd1b54a32d192ed03ULL));
  std::lock_guard<std::mutex> lk(memMu_);
  regions_[reinterpret_cast<uintptr_t>(p)] = Region{rounded, fd};
  return p;
}

void HostBackedDevice::free(void* p) {
  if (!usableHere() || p == nullptr) return;
  std::lock_guard<std::mutex> lk(memMu_);
  auto it = regions_.find(reinterpret_cast<uintptr_t>(p));
  MYR_ASSERT(it != regions_.end() && it->second.fd >= 0 && "free() of a pointer alloc() did not return");
  ::munmap(p, it->second.bytes);
  ::close(it->second.fd);
  regions_.erase(it);
}

Result<SharedMemoryHandle> HostBackedDevice::exportMemory(void* p) {
  MYR_TRY(checkProcess("exportMemory"));
  std::lock_guard<std::mutex> lk(memMu_);
  auto it = regions_.find(reinterpret_cast<uintptr_t>(p));
  if (it == regions_.end() || it->second.fd < 0)
    return invalidArgument("host-backed device: exportMemory(" + addressText(p) +
                           "): not the base of an allocation of this device");
  int fd = ::fcntl(it->second.fd, F_DUPFD_CLOEXEC, 0);
  if (fd < 0) return systemError("host-backed device: dup of a memfd for export", errno);
  SharedMemoryHandle h;
  h.fd = fd;
  h.bytes = it->second.bytes;
  return h;
}

Result<void*> HostBackedDevice::importMemory(SharedMemoryHandle handle) {
  int fd = handle.fd;
  auto fail = [fd](Status s) {
    if (fd >= 0) ::close(fd);
    return s;
  };
  if (!usableHere()) return fail(checkProcess("importMemory"));
  if (fd < 0) return fail(invalidArgument("host-backed device: importMemory of a handle without a file descriptor"));
  struct stat st {};
  if (::fstat(fd, &st) != 0) return fail(systemError("host-backed device: fstat of an imported handle", errno));
  // As cuMemMap: the whole exported allocation (its size rounded up to the granularity), no more, no less.
  if (handle.bytes == 0 || static_cast<size_t>(st.st_size) != handle.bytes)
    return fail(invalidArgument("host-backed device: importMemory: the handle says " + std::to_string(handle.bytes) +
                                " bytes, the exported allocation holds " + std::to_string(st.st_size) +
                                " (a whole allocation is mapped)"));
  void* p = ::mmap(nullptr, handle.bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  if (p == MAP_FAILED)
    return fail(systemError("host-backed device: mmap of " + std::to_string(handle.bytes) + " imported bytes", errno));
  ::close(fd);
  std::lock_guard<std::mutex> lk(memMu_);
  regions_[reinterpret_cast<uintptr_t>(p)] = Region{handle.bytes, -1};
  return p;
}

void HostBackedDevice::closeImported(void* p) {
  if (!usableHere() || p == nullptr) return;
  std::lock_guard<std::mutex> lk(memMu_);
  auto it = regions_.find(reinterpret_cast<uintptr_t>(p));
  MYR_ASSERT(it != regions_.end() && it->second.fd < 0 && "closeImported() of a pointer importMemory did not return");
  ::munmap(p, it->second.bytes);
  regions_.erase(it);
}

Status HostBackedDevice::checkRange(const char* what, const void* p, size_t bytes) const {
  if (options_.kernelsOnHostMemory) return Status::ok();
  std::lock_guard<std::mutex> lk(memMu_);
  if (regionOf(p, bytes) != nullptr) return Status::ok();
  return invalidArgument(std::string("host-backed device: ") + what + ": " + std::to_string(bytes) + " bytes at " +
                         addressText(p) + " are not inside one allocation or imported mapping of this device");
}

Status HostBackedDevice::checkFlag(const char* what, const uint64_t* flag, bool ownOnly) const {
  if (reinterpret_cast<uintptr_t>(flag) % 8 != 0)
    return invalidArgument(std::string("host-backed device: ") + what + ": flag " + addressText(flag) +
                           " is not 8-byte aligned");
  std::lock_guard<std::mutex> lk(memMu_);
  const Region* r = regionOf(flag, 8);
  if (r == nullptr)
    return invalidArgument(std::string("host-backed device: ") + what + ": flag " + addressText(flag) +
                           " is not device memory of this device");
  if (ownOnly && r->fd < 0)
    return invalidArgument(std::string("host-backed device: ") + what + ": flag " + addressText(flag) +
                           " is in imported memory; waits poll the process's own allocations only");
  return Status::ok();
}

}  // namespace myriad
