// pidfd_open through syscall(2) (glibc 2.36 has a wrapper, older ones do not) and /proc/<pid>/stat.
#include "core/process_state.h"

#include <fcntl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>

#ifndef SYS_pidfd_open
#define SYS_pidfd_open 434
#endif

namespace myriad {

int openPidfd(pid_t pid) {
  long fd = syscall(SYS_pidfd_open, pid, 0);
  if (fd < 0) return -1;
  fcntl(static_cast<int>(fd), F_SETFD, FD_CLOEXEC);
  return static_cast<int>(fd);
}

ProcessState processState(pid_t pid) {
  char path[64];
  std::snprintf(path, sizeof(path), "/proc/%d/stat", static_cast<int>(pid));
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return ProcessState::kGone;
  char buf[512];
  ssize_t n = read(fd, buf, sizeof(buf) - 1);
  close(fd);
  if (n <= 0) return ProcessState::kGone;
  buf[n] = '\0';
  // "pid (comm) S ...": the command may hold spaces and parentheses, the state follows the last ')'.
  const char* close = std::strrchr(buf, ')');
  if (!close || close[1] != ' ') return ProcessState::kRunning;
  switch (close[2]) {
    case 'Z':
    case 'X':
    case 'x': return ProcessState::kGone;
    case 'T':
    case 't': return ProcessState::kStopped;
    default: return ProcessState::kRunning;
  }
}

}  // namespace myriad
