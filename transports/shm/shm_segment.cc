// Creation and attachment of shared-memory FIFO segments.
#include "transports/shm/shm_segment.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstring>

namespace myriad {
namespace {
constexpr uint32_t kMagic = 0x4d594653;  // "MYFS"
size_t controlBytes() {
  return (sizeof(ShmControl) + 63) / 64 * 64;
}
}  // namespace

size_t ShmSegment::totalBytes(uint32_t slots, size_t slotBytes) {
  return controlBytes() + size_t{slots} * (sizeof(ShmSlotHeader) + slotBytes);
}

ShmSlotHeader* ShmSegment::slotHeader(uint64_t i) const {
  size_t idx = static_cast<size_t>(i % slots_);
  return reinterpret_cast<ShmSlotHeader*>(static_cast<uint8_t*>(base_) + controlBytes() +
                                          idx * (sizeof(ShmSlotHeader) + slotBytes_));
}

ShmSegment::~ShmSegment() {
  if (base_) munmap(base_, size_);
  if (owner_) shm_unlink(name_.c_str());
}

Status ShmSegment::create(const std::string& name, uint32_t slots, size_t slotBytes, uint64_t probeAddr,
                          uint64_t probeValue) {
  size_t size = totalBytes(slots, slotBytes);
  int fd = shm_open(name.c_str(), O_RDWR | O_CREAT | O_EXCL, 0600);
  if (fd < 0 && errno == EEXIST) {  // a stale segment of a crashed process with the same secret: replace it
    shm_unlink(name.c_str());
    fd = shm_open(name.c_str(), O_RDWR | O_CREAT | O_EXCL, 0600);
  }
  if (fd < 0) return systemError("shm: create " + name, errno);
  if (ftruncate(fd, static_cast<off_t>(size)) != 0) {
    int err = errno;
    close(fd);
    shm_unlink(name.c_str());
    return systemError("shm: size " + name + " to " + std::to_string(size) + " bytes (is /dev/shm full?)", err);
  }
  // MAP_POPULATE faults every page now, once per connection, never on the data path.
  void* p = mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, fd, 0);
  close(fd);
  if (p == MAP_FAILED) {
    shm_unlink(name.c_str());
    return systemError("shm: map " + name, errno);
  }
  base_ = p;
  size_ = size;
  slots_ = slots;
  slotBytes_ = slotBytes;
  name_ = name;
  owner_ = true;
  auto* c = control();
  c->slots = slots;
  c->slotBytes = slotBytes;
  c->probeAddr = probeAddr;
  c->probeValue = probeValue;
  c->cma.store(CmaState::kUnknown, std::memory_order_relaxed);
  c->attached.store(0, std::memory_order_relaxed);
  c->head.store(0, std::memory_order_relaxed);
  c->tail.store(0, std::memory_order_relaxed);
  c->magic.store(kMagic, std::memory_order_release);
  return Status::ok();
}

Status ShmSegment::attach(const std::string& name, uint32_t slots, size_t slotBytes) {
  int fd = shm_open(name.c_str(), O_RDWR, 0600);
  if (fd < 0 && errno == ENOENT) return notSupported("not created yet");
  if (fd < 0) return systemError("shm: open " + name, errno);
  size_t size = totalBytes(slots, slotBytes);
  struct stat st {};
  if (fstat(fd, &st) != 0 || static_cast<size_t>(st.st_size) != size) {
    close(fd);
    return notSupported("not sized yet");  // the creator is between shm_open and ftruncate
  }
  void* p = mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, fd, 0);
  close(fd);
  if (p == MAP_FAILED) return systemError("shm: map " + name, errno);
  auto* c = reinterpret_cast<ShmControl*>(p);
  if (c->magic.load(std::memory_order_acquire) != kMagic) {
    munmap(p, size);
    return notSupported("not initialised yet");
  }
  if (c->slots != slots || c->slotBytes != slotBytes) {
    munmap(p, size);
    return invalidUsage("shm: " + name + " has another geometry: are MYRIAD_SHM_* equal on every rank?");
  }
  base_ = p;
  size_ = size;
  slots_ = slots;
  slotBytes_ = slotBytes;
  name_ = name;
  c->attached.store(1, std::memory_order_release);
  shm_unlink(name.c_str());  // both ends are mapped now; the name is no longer needed
  return Status::ok();
}

}  // namespace myriad
