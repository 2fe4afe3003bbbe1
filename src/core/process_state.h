// Processes of this host as the liveness channel sees them: a pidfd that becomes readable when the process
// exits (a zombie too, which `kill(pid, 0)` still calls alive), and its scheduling state from /proc.
#pragma once

#include <sys/types.h>

namespace myriad {

// A pidfd of `pid`, or -1 when the kernel has none to give (before Linux 5.3, or another pid namespace).
int openPidfd(pid_t pid);

enum class ProcessState {
  kRunning,  // running or sleeping
  kStopped,  // stopped by a signal (SIGSTOP) or traced
  kGone,     // exited: a zombie, or no such process
};

// From /proc/<pid>/stat.
ProcessState processState(pid_t pid);

}  // namespace myriad
