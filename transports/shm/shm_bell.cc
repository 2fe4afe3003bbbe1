// ShmBell: shared-memory futex doorbells.
#include "transports/shm/shm_bell.h"

#include <fcntl.h>
#include <linux/futex.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <climits>
#include <ctime>

namespace myriad {
namespace {
constexpr size_t kBellBytes = 4096;

long futex(std::atomic<uint32_t>* addr, int op, uint32_t val, const timespec* timeout) {
  // A process-shared futex: no FUTEX_PRIVATE_FLAG.
  return syscall(SYS_futex, reinterpret_cast<uint32_t*>(addr), op, val, timeout, nullptr, 0);
}
}  // namespace

ShmBell::~ShmBell() {
  if (word_) munmap(word_, kBellBytes);
  if (owner_) shm_unlink(name_.c_str());
}

bool ShmBell::nameExists() const {
  int fd = shm_open(name_.c_str(), O_RDONLY, 0600);
  if (fd < 0) return false;
  close(fd);
  return true;
}

Status ShmBell::open(const std::string& name, bool owner) {
  // Every opener may create it: the size is fixed and a fresh tmpfs page is zero, i.e. a valid bell.
  int fd = shm_open(name.c_str(), O_RDWR | O_CREAT, 0600);
  if (fd < 0) return systemError("shm: open doorbell " + name, errno);
  if (ftruncate(fd, kBellBytes) != 0) {
    int err = errno;
    close(fd);
    return systemError("shm: size doorbell " + name, err);
  }
  void* p = mmap(nullptr, kBellBytes, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, fd, 0);
  close(fd);
  if (p == MAP_FAILED) return systemError("shm: map doorbell " + name, errno);
  word_ = static_cast<BellWord*>(p);
  name_ = name;
  owner_ = owner;
  return Status::ok();
}

void ShmBell::ring() {
  word_->seq.fetch_add(1, std::memory_order_seq_cst);
  if (word_->sleepers.load(std::memory_order_seq_cst) > 0) futex(&word_->seq, FUTEX_WAKE, INT_MAX, nullptr);
}

void ShmBell::wait(uint32_t seen, int timeoutUs) {
  word_->sleepers.fetch_add(1, std::memory_order_seq_cst);
  if (word_->seq.load(std::memory_order_seq_cst) == seen) {
    timespec ts{timeoutUs / 1000000, static_cast<long>(timeoutUs % 1000000) * 1000};
    futex(&word_->seq, FUTEX_WAIT, seen, &ts);
  }
  word_->sleepers.fetch_sub(1, std::memory_order_seq_cst);
}

}  // namespace myriad
