// CpuWaiters: does any task on this host wait for a CPU right now? The executor keeps spinning on a quiet
// connection only while the answer is no: then the core it holds is one nobody else wants, and spinning
// spares the futex sleep and wake-up (tens of microseconds on a virtual machine whose idle vCPU halts).
// When the answer is yes, the task waiting may be the very peer this rank waits for, and sleeping hands it
// the core. The answer is the kernel's count of runnable tasks (the fourth field of /proc/loadavg, this
// task included) against the CPUs online, read at most once per kEvery.
#pragma once

#include "base/clock.h"

namespace myriad {

class CpuWaiters {
 public:
  CpuWaiters();
  ~CpuWaiters();
  CpuWaiters(const CpuWaiters&) = delete;
  CpuWaiters& operator=(const CpuWaiters&) = delete;

  // True when more tasks are runnable than there are CPUs, or when the count cannot be read.
  bool any(Clock::time_point now);
  // Parses the runnable count out of /proc/loadavg's text ("0.50 0.40 0.30 3/250 12345"); -1 if malformed.
  static int runnableIn(const char* text, size_t len);

 private:
  static constexpr auto kEvery = std::chrono::microseconds(25);
  int fd_ = -1;
  int cpus_ = 1;
  bool last_ = true;
  Clock::time_point checked_{};
};

}  // namespace myriad
