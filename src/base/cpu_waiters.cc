// CpuWaiters: the runnable-task count from /proc/loadavg, re-read with one pread(2) per check.
#include "base/cpu_waiters.h"

#include <fcntl.h>
#include <unistd.h>

namespace myriad {

CpuWaiters::CpuWaiters() {
  fd_ = ::open("/proc/loadavg", O_RDONLY | O_CLOEXEC);
  long n = sysconf(_SC_NPROCESSORS_ONLN);
  cpus_ = n > 0 ? static_cast<int>(n) : 1;
}

CpuWaiters::~CpuWaiters() {
  if (fd_ >= 0) ::close(fd_);
}

int CpuWaiters::runnableIn(const char* text, size_t len) {
  // Skip the three load averages; the runnable count ends at the '/'.
  size_t i = 0;
  for (int field = 0; field < 3; ++field) {
    while (i < len && text[i] != ' ') ++i;
    while (i < len && text[i] == ' ') ++i;
  }
  int value = 0, digits = 0;
  for (; i < len && text[i] >= '0' && text[i] <= '9' && digits < 9; ++i, ++digits) value = value * 10 + (text[i] - '0');
  return digits > 0 && i < len && text[i] == '/' ? value : -1;
}

bool CpuWaiters::any(Clock::time_point now) {
  if (fd_ < 0) return true;
  if (now - checked_ < kEvery) return last_;
  checked_ = now;
  char buf[128];
  ssize_t n = ::pread(fd_, buf, sizeof(buf), 0);
  int runnable = n > 0 ? runnableIn(buf, static_cast<size_t>(n)) : -1;
  last_ = runnable < 0 || runnable > cpus_;
  return last_;
}

}  // namespace myriad
