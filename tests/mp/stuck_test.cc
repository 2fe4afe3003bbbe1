// Stuck is named, late is waited for (issue 18). Three ranks each receive from the next (0 from 1, 1 from 2,
// 2 from 0) and nobody sends: every rank is inside a call waiting on another, a cycle no data will ever
// break. After MYRIAD_STALL_TIMEOUT_MS (3 s here), not before, each fails with myrTimeout saying "stuck"
// and naming the chain. Then the same receive from a sender that is only late (it sleeps 6 s, twice the
// stall bound, before it sends): no error.
#include <gtest/gtest.h>
#include <stdlib.h>

#include <chrono>
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

TEST(Stuck, ACycleOfReceivesFailsAfterTheStallBoundNamingTheChain) {
  constexpr int n = 3;
  auto body = [&](int rank, const myrUniqueId& id) -> int {
    useTransport(Transport::kShm);
    setenv("MYRIAD_STALL_TIMEOUT_MS", "3000", 1);
    myrComm_t comm = nullptr;
    std::string err = initComm(&comm, n, id, rank);
    MYR_CHILD_CHECK(err.empty(), err);
    std::vector<float> buf(1024);
    const int from = (rank + 1) % n;
    const auto t0 = Clock::now();
    const myrResult_t res = myrRecv(buf.data(), buf.size(), myrFloat32, from, comm, nullptr);
    const double took = std::chrono::duration<double>(Clock::now() - t0).count();
    const char* text = myrGetLastError(comm);
    const std::string what =
        resultText("myrRecv", res, nullptr) + " after " + std::to_string(took) + " s: \"" + (text ? text : "") + "\"";
    // A rank whose own bound has not passed yet may learn the failure from the first one that gives up.
    MYR_CHILD_CHECK(res == myrTimeout || res == myrRemoteError, what);
    MYR_CHILD_CHECK(took >= 2.9, "failed before the stall bound: " + what);
    MYR_CHILD_CHECK(took < 15.0, "failed long after the stall bound: " + what);
    const std::string t = text ? text : "";
    MYR_CHILD_CHECK(t.find("stuck") != std::string::npos, "not named as stuck: " + what);
    MYR_CHILD_CHECK(t.find("unresponsive") == std::string::npos && t.find("exited") == std::string::npos,
                    "a live rank called dead: " + what);
    MYR_CHILD_CHECK(t.find("in recv #1") != std::string::npos, "the chain does not say what the ranks are in: " + what);
    (void)myrCommAbort(comm);
    return 0;
  };
  const ForkOutcome out = forkRanks(n, body, 60s, testSeed());
  EXPECT_TRUE(out.allSucceeded()) << out.describeFailures();
}

TEST(Stuck, ALateSenderIsWaitedForPastTheStallBound) {
  auto body = [&](int rank, const myrUniqueId& id) -> int {
    useTransport(Transport::kShm);
    setenv("MYRIAD_STALL_TIMEOUT_MS", "3000", 1);
    myrComm_t comm = nullptr;
    std::string err = initComm(&comm, 2, id, rank);
    MYR_CHILD_CHECK(err.empty(), err);
    std::vector<float> buf(1024, 7.0f);
    myrResult_t res;
    if (rank == 1) {
      std::this_thread::sleep_for(6s);
      res = myrSend(buf.data(), buf.size(), myrFloat32, 0, comm, nullptr);
    } else {
      std::fill(buf.begin(), buf.end(), 0.0f);
      res = myrRecv(buf.data(), buf.size(), myrFloat32, 1, comm, nullptr);
      MYR_CHILD_CHECK(res != myrSuccess || buf[1023] == 7.0f, "wrong data");
    }
    MYR_CHILD_CHECK(res == myrSuccess, resultText(rank ? "myrSend" : "myrRecv", res, comm));
    return finishComm(comm, nullptr).empty() ? 0 : 1;
  };
  const ForkOutcome out = forkRanks(2, body, 60s, testSeed());
  EXPECT_TRUE(out.allSucceeded()) << out.describeFailures();
}

}  // namespace
}  // namespace myriad::test
