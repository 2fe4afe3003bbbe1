// Non-blocking init (myrConfig_t.blocking = 0) across forked ranks: myrCommInitRankConfig must return
// myrInProgress, never a finished communicator, and myrCommGetAsyncError must report myrInProgress while the
// last rank has not joined (it joins 300 ms late), then myrSuccess, after which collectives run.
// Invariant: a library that initialised blocking, or reported success before every rank joined, fails here.
// Also: myrCommAbort during a non-blocking init that cannot finish returns within 1 s.
#include <gtest/gtest.h>

#include <chrono>
#include <string>
#include <thread>

#include "myriad/myriad.h"
#include "tests/common/fork_ranks.h"
#include "tests/common/mp_helpers.h"

namespace myriad::test {
namespace {

using namespace std::chrono_literals;

TEST(NonBlockingInit, ReturnsInProgressThenSucceeds) {
  constexpr int kRanks = 3;
  auto body = [&](int rank, const myrUniqueId& id) -> int {
    useTransport(Transport::kShm);
    if (rank == kRanks - 1) std::this_thread::sleep_for(300ms);  // the others must see the init unfinished
    myrConfig_t config = MYR_CONFIG_INITIALIZER;
    config.blocking = 0;
    myrComm_t comm = nullptr;
    const myrResult_t res = myrCommInitRankConfig(&comm, kRanks, id, rank, &config);
    MYR_CHILD_CHECK(res == myrInProgress, "myrCommInitRankConfig with blocking = 0 returned " +
                                              std::string(myrGetErrorString(res)) + ", want myrInProgress");
    MYR_CHILD_CHECK(comm != nullptr, "no communicator handle to poll");
    int polls = 0, inProgress = 0;
    myrResult_t state = myrInProgress;
    for (const auto end = std::chrono::steady_clock::now() + 20s; std::chrono::steady_clock::now() < end;) {
      const myrResult_t got = myrCommGetAsyncError(comm, &state);
      MYR_CHILD_CHECK(got == myrSuccess, resultText("myrCommGetAsyncError", got, comm));
      ++polls;
      if (state != myrInProgress) break;
      ++inProgress;
      std::this_thread::sleep_for(1ms);
    }
    MYR_CHILD_CHECK(state == myrSuccess, "the init ended with " + std::string(myrGetErrorString(state)) + " after " +
                                             std::to_string(polls) + " polls: " + myrGetLastError(comm));
    // The early ranks cannot have finished before the late one joined 300 ms after them.
    MYR_CHILD_CHECK(rank == kRanks - 1 || inProgress > 0,
                    "myrCommGetAsyncError never reported myrInProgress before the last rank joined");
    int32_t value = rank + 1, sum = 0;
    const myrResult_t ar = myrAllReduce(&value, &sum, 1, myrInt32, myrSum, comm, nullptr);
    MYR_CHILD_CHECK(ar == myrSuccess, resultText("myrAllReduce", ar, comm));
    MYR_CHILD_CHECK(sum == kRanks * (kRanks + 1) / 2, "all-reduce gave " + std::to_string(sum));
    const std::string err = finishComm(comm, nullptr);
    MYR_CHILD_CHECK(err.empty(), err);
    return 0;
  };
  const ForkOutcome out = forkRanks(kRanks, body, 60s, testSeed());
  EXPECT_TRUE(out.allSucceeded()) << out.describeFailures();
}

// myrCommAbort during a non-blocking init that cannot finish (rank 1 never joins): returns within 1 s.
TEST(NonBlockingInit, AbortWhileInProgressReturnsWithinASecond) {
  auto body = [&](int rank, const myrUniqueId& id) -> int {
    useTransport(Transport::kShm);
    if (rank == 1) return 0;  // never joins
    myrConfig_t config = MYR_CONFIG_INITIALIZER;
    config.blocking = 0;
    myrComm_t comm = nullptr;
    const myrResult_t res = myrCommInitRankConfig(&comm, 2, id, rank, &config);
    MYR_CHILD_CHECK(res == myrInProgress, std::string("init returned ") + myrGetErrorString(res));
    std::this_thread::sleep_for(200ms);
    myrResult_t state = myrSuccess;
    MYR_CHILD_CHECK(myrCommGetAsyncError(comm, &state) == myrSuccess && state == myrInProgress,
                    std::string("the init without its peer reports ") + myrGetErrorString(state));
    const auto t0 = std::chrono::steady_clock::now();
    const myrResult_t aborted = myrCommAbort(comm);
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    MYR_CHILD_CHECK(aborted == myrSuccess, resultText("myrCommAbort", aborted, nullptr));
    MYR_CHILD_CHECK(seconds < 1.0, "myrCommAbort took " + std::to_string(seconds) + " s");
    return 0;
  };
  const ForkOutcome out = forkRanks(2, body, 30s, testSeed());
  EXPECT_TRUE(out.allSucceeded()) << out.describeFailures();
}

}  // namespace
}  // namespace myriad::test
