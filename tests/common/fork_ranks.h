// forkRanks: runs n ranks as forked child processes of a test, for tests over real processes and transports.
// The parent (the gtest process) calls myrGetUniqueId, so it hosts the rendezvous while the children run
// (forkRanksWithoutId: it does not; in ASan and TSan builds a holder child hosts it, so that the parent forks
// without threads); children report through a pipe and always leave by _exit(), never returning into gtest;
// they start together once all are forked; the parent reaps them all by a deadline, SIGKILLing whoever is
// still running then.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "myriad/myriad.h"

namespace myriad::test {

// The body of one child: returns its exit code (0: success). Runs after fork, in the child only.
using RankFn = std::function<int(int rank, const myrUniqueId& id)>;

struct RankOutcome {
  int rank = -1;
  pid_t pid = -1;
  bool exited = false;  // exited normally, with exitCode
  int exitCode = -1;
  int termSignal = 0;  // non-zero: killed by this signal
  bool killedAtDeadline = false;
  bool zombie = false;  // ended, left unreaped until every child had ended (reapAtTheEnd)
  double seconds = 0;   // from the fork to the child's end
  std::string report;   // everything the child sent with childReport()

  bool succeeded() const { return exited && exitCode == 0; }
  std::string describe() const;  // "rank 2 (pid 411): exited with 1 after 0.3 s: <report>"
};

struct ForkOutcome {
  std::vector<RankOutcome> ranks;
  bool deadlineHit = false;
  uint64_t seed = 0;
  std::string setupError;  // myrGetUniqueId, pipe or fork failed; ranks may be empty

  bool allSucceeded() const;
  // One line per rank that did not succeed, each naming the rank and the seed; "" when all succeeded.
  std::string describeFailures() const;
};

// Calls myrGetUniqueId, then runs fn(rank, id) in n children.
ForkOutcome forkRanks(int n, const RankFn& fn, std::chrono::milliseconds deadline, uint64_t seed = 0);
// As forkRanks, with an id the caller already holds.
ForkOutcome forkRanksWithId(int n, const myrUniqueId& id, const RankFn& fn, std::chrono::milliseconds deadline,
                            uint64_t seed = 0);

// As forkRanks, without an id: the parent hosts nothing and fn gets an all-zero id, for bodies that make
// their own (MYRIAD_COMM_ID, where every rank calls myrGetUniqueId).
ForkOutcome forkRanksWithoutId(int n, const RankFn& fn, std::chrono::milliseconds deadline, uint64_t seed = 0);

// While on (in the parent), a child that ends stays a zombie until every child has ended: a dead rank whose
// parent has not reaped it, which kill(pid, 0) still finds. Off: reaped within 20 ms.
void reapAtTheEnd(bool on);

// In a child: appends one line to what the parent receives as RankOutcome::report (no-op in the parent).
void childReport(const std::string& line);
// The rank of this child process, or -1 outside a forkRanks child.
int childRank();

// The seed of this test process: MYRIAD_TEST_SEED if set, else drawn once from the clock and pid.
uint64_t testSeed();

}  // namespace myriad::test
