// myrCommAbort from a second thread while the first is blocked in a collective that its peer never joins (the
// peer is alive, so nothing but the abort ends the wait before the 30-minute call timeout): the abort returns
// within 1 s, the blocked call within 1 s of it, failing, and its text (myrGetLastError(NULL) on its thread,
// the handle being freed) says "aborted". Invariant: a call still blocked, or one that returns success, fails.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <string>
#include <thread>
#include <vector>

#include "myriad/myriad.h"
#include "tests/common/fork_ranks.h"
#include "tests/common/mp_helpers.h"

namespace myriad::test {
namespace {

using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

double secondsSince(Clock::time_point t) {
  return std::chrono::duration<double>(Clock::now() - t).count();
}

class AbortBlocked : public ::testing::TestWithParam<Transport> {};

TEST_P(AbortBlocked, FromASecondThreadEndsTheBlockedCallWithinASecond) {
  const Transport transport = GetParam();
  auto body = [&](int rank, const myrUniqueId& id) -> int {
    useTransport(transport);
    myrComm_t comm = nullptr;
    const std::string err = initComm(&comm, 2, id, rank);
    MYR_CHILD_CHECK(err.empty(), err);
    if (rank == 1) {  // alive, in no call, until rank 0 is long done
      std::this_thread::sleep_for(4s);
      (void)myrCommAbort(comm);
      return 0;
    }
    std::vector<float> send(1024, 1.0f), recv(1024, 0.0f);
    std::atomic<bool> returned{false};
    myrResult_t res = myrSuccess;
    std::string text;
    Clock::time_point returnedAt;
    std::thread blocked([&] {
      res = myrAllReduce(send.data(), recv.data(), send.size(), myrFloat32, myrSum, comm, nullptr);
      returnedAt = Clock::now();
      text = myrGetLastError(nullptr);
      returned = true;
    });
    std::this_thread::sleep_for(500ms);
    const bool wasBlocked = !returned;
    const Clock::time_point abortAt = Clock::now();
    const myrResult_t aborted = myrCommAbort(comm);
    const double abortSeconds = secondsSince(abortAt);
    blocked.join();
    const double callSeconds = std::chrono::duration<double>(returnedAt - abortAt).count();
    MYR_CHILD_CHECK(wasBlocked,
                    "the all-reduce returned before the abort, with " + std::string(myrGetErrorString(res)));
    MYR_CHILD_CHECK(aborted == myrSuccess, resultText("myrCommAbort", aborted, nullptr));
    MYR_CHILD_CHECK(abortSeconds < 1.0, "myrCommAbort took " + std::to_string(abortSeconds) + " s");
    MYR_CHILD_CHECK(callSeconds < 1.0,
                    "the blocked call returned " + std::to_string(callSeconds) + " s after the abort");
    MYR_CHILD_CHECK(res != myrSuccess, "the aborted all-reduce returned myrSuccess");
    MYR_CHILD_CHECK(text.find("aborted") != std::string::npos,
                    std::string(myrGetErrorString(res)) + " with text \"" + text + "\" does not say aborted");
    childReport("abort took " + std::to_string(abortSeconds) + " s, the blocked call returned " +
                std::to_string(callSeconds) + " s after it: " + text);
    return 0;
  };
  const ForkOutcome out = forkRanks(2, body, 30s, testSeed());
  EXPECT_TRUE(out.allSucceeded()) << out.describeFailures();
  for (const RankOutcome& r : out.ranks)
    if (!r.report.empty()) std::printf("rank %d: %s\n", r.rank, r.report.c_str());
}

INSTANTIATE_TEST_SUITE_P(Mp, AbortBlocked, ::testing::Values(Transport::kShm, Transport::kTcp),
                         [](const ::testing::TestParamInfo<Transport>& info) {
                           return std::string(info.param == Transport::kShm ? "shm" : "tcp");
                         });

}  // namespace
}  // namespace myriad::test
