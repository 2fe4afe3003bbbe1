// forkRanks: one pipe per child carries its report lines; the parent polls the pipes and reaps children
// with WNOHANG until all have ended or the deadline passes. The children start together, once all are
// forked. Output is flushed before fork so that buffered gtest text is not printed once per child; children
// ask for SIGKILL if the parent dies first.
#include "tests/common/fork_ranks.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>

namespace myriad::test {
namespace {

int gReportFd = -1;
bool gReapAtTheEnd = false;
int gChildRank = -1;

using Clock = std::chrono::steady_clock;

double secondsSince(Clock::time_point t0) {
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

[[noreturn]] void runChild(int rank, int reportFd, int goFd, pid_t parent, const RankFn& fn, const myrUniqueId& id) {
  prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (getppid() != parent) _exit(98);  // the parent died between fork and prctl
  // Wait until every sibling is forked (the parent closes the write end): until then no rank talks to the
  // parent's rendezvous thread, so no fork happens while that thread holds a lock that the child would
  // inherit locked for ever (ASan's allocator lock is one: a child's first malloc would hang).
  char go = 0;
  while (read(goFd, &go, 1) < 0 && errno == EINTR) {
  }
  close(goFd);
  gReportFd = reportFd;
  gChildRank = rank;
  int code = 1;
  try {
    code = fn(rank, id);
  } catch (const std::exception& e) {
    childReport(std::string("uncaught exception: ") + e.what());
    code = 3;
  } catch (...) {
    childReport("uncaught exception of unknown type");
    code = 3;
  }
  std::fflush(stdout);
  std::fflush(stderr);
  _exit(code >= 0 && code <= 255 ? code : 1);
}

// Reads whatever the pipe holds; closes it (fd = -1) at end of file.
void drainPipe(int& fd, std::string& into) {
  char buf[4096];
  while (fd >= 0) {
    const ssize_t got = read(fd, buf, sizeof(buf));
    if (got > 0) {
      into.append(buf, static_cast<size_t>(got));
      continue;
    }
    if (got < 0 && errno == EINTR) continue;
    if (got < 0 && errno == EAGAIN) return;
    close(fd);
    fd = -1;
  }
}

void recordStatus(RankOutcome& r, int status, Clock::time_point t0) {
  r.seconds = secondsSince(t0);
  if (WIFEXITED(status)) {
    r.exited = true;
    r.exitCode = WEXITSTATUS(status);
  } else if (WIFSIGNALED(status)) {
    r.termSignal = WTERMSIG(status);
  }
}

// Sanitizer builds: the rendezvous is hosted by a holder child, not by the gtest process, so that the
// parent has no thread when it forks the ranks. A fork copies a lock that another thread holds at that
// moment as held for ever; ASan's allocator (GCC 12's runtime does not take its locks around fork) and
// TSan (which by default kills a child of a multi-threaded parent once it starts a thread) both need a
// single-threaded parent. Elsewhere the parent hosts it, and its log configuration (MYRIAD_DEBUG_FILE with
// the parent's pid) is what the ranks inherit.
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
constexpr bool kIdFromHolder = true;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
constexpr bool kIdFromHolder = true;
#else
constexpr bool kIdFromHolder = false;
#endif
#else
constexpr bool kIdFromHolder = false;
#endif

bool readAll(int fd, void* buf, size_t bytes) {
  size_t done = 0;
  while (done < bytes) {
    const ssize_t got = read(fd, static_cast<char*>(buf) + done, bytes - done);
    if (got > 0) {
      done += static_cast<size_t>(got);
    } else if (got == 0 || errno != EINTR) {
      return false;
    }
  }
  return true;
}

ForkOutcome forkRanksWithHolder(int n, const RankFn& fn, std::chrono::milliseconds deadline, uint64_t seed);

}  // namespace

std::string RankOutcome::describe() const {
  char head[160];
  if (killedAtDeadline) {
    std::snprintf(head, sizeof(head), "rank %d (pid %d): still running at the deadline, killed after %.1f s", rank,
                  static_cast<int>(pid), seconds);
  } else if (exited) {
    std::snprintf(head, sizeof(head), "rank %d (pid %d): exited with code %d after %.2f s", rank, static_cast<int>(pid),
                  exitCode, seconds);
  } else {
    std::snprintf(head, sizeof(head), "rank %d (pid %d): killed by signal %d (%s) after %.2f s", rank,
                  static_cast<int>(pid), termSignal, strsignal(termSignal), seconds);
  }
  std::string text = head;
  if (!report.empty()) text += "; report: " + report;
  while (!text.empty() && text.back() == '\n') text.pop_back();
  return text;
}

bool ForkOutcome::allSucceeded() const {
  if (!setupError.empty() || deadlineHit) return false;
  for (const RankOutcome& r : ranks) {
    if (!r.succeeded()) return false;
  }
  return true;
}

std::string ForkOutcome::describeFailures() const {
  std::string text;
  const std::string seedText = "[seed " + std::to_string(seed) + "] ";
  if (!setupError.empty()) text += seedText + "setup: " + setupError + "\n";
  if (deadlineHit) text += seedText + "deadline passed before every rank ended\n";
  for (const RankOutcome& r : ranks) {
    if (!r.succeeded()) text += seedText + r.describe() + "\n";
  }
  return text;
}

ForkOutcome forkRanksWithId(int n, const myrUniqueId& id, const RankFn& fn, std::chrono::milliseconds deadline,
                            uint64_t seed) {
  ForkOutcome out;
  out.seed = seed;
  out.ranks.resize(static_cast<size_t>(n > 0 ? n : 0));
  std::vector<int> readFds(out.ranks.size(), -1);
  std::fflush(nullptr);
  const pid_t parent = getpid();
  const Clock::time_point t0 = Clock::now();
  int goFds[2];  // the children start when the parent closes goFds[1], once all are forked
  if (pipe2(goFds, O_CLOEXEC) != 0) {
    out.setupError = std::string("pipe2: ") + std::strerror(errno);
    return out;
  }
  for (int r = 0; r < n; ++r) {
    int fds[2];
    if (pipe2(fds, O_CLOEXEC) != 0) {
      out.setupError = std::string("pipe2: ") + std::strerror(errno);
      break;
    }
    const pid_t pid = fork();
    if (pid == 0) {
      close(fds[0]);
      close(goFds[1]);
      for (int fd : readFds) {
        if (fd >= 0) close(fd);
      }
      runChild(r, fds[1], goFds[0], parent, fn, id);
    }
    close(fds[1]);
    if (pid < 0) {
      close(fds[0]);
      out.setupError = std::string("fork: ") + std::strerror(errno);
      break;
    }
    fcntl(fds[0], F_SETFL, fcntl(fds[0], F_GETFL) | O_NONBLOCK);
    readFds[r] = fds[0];
    out.ranks[r].rank = r;
    out.ranks[r].pid = pid;
  }
  if (!out.setupError.empty()) {  // do not leave half a communicator running
    for (RankOutcome& r : out.ranks) {
      if (r.pid > 0) kill(r.pid, SIGKILL);
    }
  }
  close(goFds[1]);
  close(goFds[0]);

  const Clock::time_point end = t0 + deadline;
  size_t running = 0;
  for (const RankOutcome& r : out.ranks) running += r.pid > 0 ? 1 : 0;
  while (running > 0) {
    std::vector<pollfd> pfds;
    for (int fd : readFds) {
      if (fd >= 0) pfds.push_back({fd, POLLIN, 0});
    }
    poll(pfds.data(), pfds.size(), 20);
    for (size_t r = 0; r < out.ranks.size(); ++r) drainPipe(readFds[r], out.ranks[r].report);
    for (RankOutcome& r : out.ranks) {
      if (r.pid <= 0 || r.exited || r.termSignal != 0 || r.zombie) continue;
      if (gReapAtTheEnd) {
        siginfo_t info{};
        if (waitid(P_PID, static_cast<id_t>(r.pid), &info, WEXITED | WNOHANG | WNOWAIT) == 0 && info.si_pid == r.pid) {
          r.zombie = true;
          --running;
        }
        continue;
      }
      int status = 0;
      const pid_t got = waitpid(r.pid, &status, WNOHANG);
      if (got == r.pid) {
        recordStatus(r, status, t0);
        --running;
      } else if (got < 0 && errno == ECHILD) {  // someone else reaped it (SIGCHLD ignored?)
        r.exited = true;
        r.report += "cannot be waited for (ECHILD): exit status unknown\n";
        --running;
      }
    }
    if (running == 0 || Clock::now() < end) continue;
    out.deadlineHit = true;
    for (RankOutcome& r : out.ranks) {
      if (r.pid <= 0 || r.exited || r.termSignal != 0 || r.zombie) continue;
      kill(r.pid, SIGKILL);
      int status = 0;
      while (waitpid(r.pid, &status, 0) < 0 && errno == EINTR) {
      }
      recordStatus(r, status, t0);
      r.killedAtDeadline = true;
      --running;
    }
  }
  for (RankOutcome& r : out.ranks) {
    if (!r.zombie) continue;
    int status = 0;
    while (waitpid(r.pid, &status, 0) < 0 && errno == EINTR) {
    }
    recordStatus(r, status, t0);
  }
  for (size_t r = 0; r < out.ranks.size(); ++r) {
    drainPipe(readFds[r], out.ranks[r].report);
    if (readFds[r] >= 0) close(readFds[r]);
  }
  return out;
}

ForkOutcome forkRanks(int n, const RankFn& fn, std::chrono::milliseconds deadline, uint64_t seed) {
  myrUniqueId id;
  std::memset(&id, 0, sizeof(id));
  if (kIdFromHolder) return forkRanksWithHolder(n, fn, deadline, seed);
  const myrResult_t res = myrGetUniqueId(&id);
  if (res != myrSuccess) {
    ForkOutcome out;
    out.seed = seed;
    out.setupError = std::string("myrGetUniqueId failed: ") + myrGetErrorString(res);
    return out;
  }
  return forkRanksWithId(n, id, fn, deadline, seed);
}

namespace {

// The holder calls myrGetUniqueId, hands the result and the id over a pipe and then only serves the
// rendezvous (its thread) until it is killed, after the ranks have ended.
ForkOutcome forkRanksWithHolder(int n, const RankFn& fn, std::chrono::milliseconds deadline, uint64_t seed) {
  ForkOutcome out;
  out.seed = seed;
  int fds[2];
  if (pipe2(fds, O_CLOEXEC) != 0) {
    out.setupError = std::string("pipe2: ") + std::strerror(errno);
    return out;
  }
  std::fflush(nullptr);
  const pid_t parent = getpid();
  const pid_t holder = fork();
  if (holder == 0) {
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() != parent) _exit(98);
    close(fds[0]);
    myrUniqueId id;
    std::memset(&id, 0, sizeof(id));
    const myrResult_t res = myrGetUniqueId(&id);
    if (write(fds[1], &res, sizeof(res)) != static_cast<ssize_t>(sizeof(res)) ||
        write(fds[1], &id, sizeof(id)) != static_cast<ssize_t>(sizeof(id)))
      _exit(1);
    close(fds[1]);
    for (;;) pause();
  }
  close(fds[1]);
  if (holder < 0) {
    close(fds[0]);
    out.setupError = std::string("fork of the rendezvous holder: ") + std::strerror(errno);
    return out;
  }
  myrResult_t res = myrInternalError;
  myrUniqueId id;
  std::memset(&id, 0, sizeof(id));
  const bool got = readAll(fds[0], &res, sizeof(res)) && readAll(fds[0], &id, sizeof(id));
  close(fds[0]);
  if (!got || res != myrSuccess) {
    out.setupError = std::string("myrGetUniqueId in the rendezvous holder failed: ") +
                     (got ? myrGetErrorString(res) : "it ended without an id");
  } else {
    out = forkRanksWithId(n, id, fn, deadline, seed);
  }
  kill(holder, SIGKILL);
  int status = 0;
  while (waitpid(holder, &status, 0) < 0 && errno == EINTR) {
  }
  return out;
}

}  // namespace

ForkOutcome forkRanksWithoutId(int n, const RankFn& fn, std::chrono::milliseconds deadline, uint64_t seed) {
  myrUniqueId none;
  std::memset(&none, 0, sizeof(none));
  return forkRanksWithId(n, none, fn, deadline, seed);
}

void reapAtTheEnd(bool on) {
  gReapAtTheEnd = on;
}

void childReport(const std::string& line) {
  if (gReportFd < 0) return;
  std::string text = line;
  if (text.empty() || text.back() != '\n') text += '\n';
  size_t done = 0;
  while (done < text.size()) {
    const ssize_t put = write(gReportFd, text.data() + done, text.size() - done);
    if (put > 0) {
      done += static_cast<size_t>(put);
      continue;
    }
    if (put < 0 && errno == EINTR) continue;
    return;
  }
}

int childRank() {
  return gChildRank;
}

uint64_t testSeed() {
  static const uint64_t seed = []() -> uint64_t {
    if (const char* s = std::getenv("MYRIAD_TEST_SEED"); s != nullptr && *s != '\0') {
      return static_cast<uint64_t>(std::strtoull(s, nullptr, 0));
    }
    const auto ticks = static_cast<uint64_t>(Clock::now().time_since_epoch().count());
    return (ticks ^ (static_cast<uint64_t>(getpid()) << 32)) % 1000000007ULL;
  }();
  return seed;
}

}  // namespace myriad::test
