// Late is not dead (issue 18): one seeded rank of three starts its all-reduce (or barrier) 20 s after the
// others — a checkpoint write, a data-loader stall — under the default timers. Nobody fails, the result is
// right, and while they wait the others log a stall report (MYRIAD_STALL_REPORT_S, 5 s here) that names the
// late rank as alive and not in a call.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "myriad/myriad.h"
#include "tests/common/fork_ranks.h"
#include "tests/common/mp_helpers.h"

namespace myriad::test {
namespace {

using namespace std::chrono_literals;

constexpr int kRanks = 3;
constexpr auto kLate = 20s;

std::string slurp(const std::string& path) {
  std::ifstream f(path);
  std::stringstream s;
  s << f.rdbuf();
  return s.str();
}

class LateRank : public testing::TestWithParam<bool> {};  // true: barrier, false: all-reduce

TEST_P(LateRank, IsWaitedForAndNamedInStallReports) {
  const bool barrier = GetParam();
  const uint64_t seed = testSeed();
  const int late = static_cast<int>(seed % kRanks);
  char dir[] = "/tmp/myriad-late-XXXXXX";
  ASSERT_NE(mkdtemp(dir), nullptr);
  auto body = [&](int rank, const myrUniqueId& id) -> int {
    useTransport(Transport::kShm);
    setenv("MYRIAD_STALL_REPORT_S", "5", 1);
    // The log goes to stderr: this rank's file.
    const std::string logPath = std::string(dir) + "/rank" + std::to_string(rank) + ".log";
    const int logFd = open(logPath.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    MYR_CHILD_CHECK(logFd >= 0 && dup2(logFd, 2) == 2, "cannot redirect stderr to " + logPath);
    myrComm_t comm = nullptr;
    std::string err = initComm(&comm, kRanks, id, rank);
    MYR_CHILD_CHECK(err.empty(), err);
    // One call first, so that the late rank has a "last entered" to report.
    float one = 1.0f, sum = 0.0f;
    myrResult_t res = myrAllReduce(&one, &sum, 1, myrFloat32, myrSum, comm, nullptr);
    MYR_CHILD_CHECK(res == myrSuccess && sum == kRanks, resultText("the first all-reduce", res, comm));
    if (rank == late) std::this_thread::sleep_for(kLate);
    const auto t0 = std::chrono::steady_clock::now();
    if (barrier) {
      res = myrBarrier(comm, nullptr);
      MYR_CHILD_CHECK(res == myrSuccess, resultText("myrBarrier after a late rank", res, comm));
    } else {
      std::vector<int64_t> send(1000), recv(1000);
      for (size_t i = 0; i < send.size(); ++i) send[i] = static_cast<int64_t>(i) * (rank + 1);
      res = myrAllReduce(send.data(), recv.data(), send.size(), myrInt64, myrSum, comm, nullptr);
      MYR_CHILD_CHECK(res == myrSuccess, resultText("myrAllReduce after a late rank", res, comm));
      for (size_t i = 0; i < recv.size(); ++i)
        MYR_CHILD_CHECK(recv[i] == static_cast<int64_t>(i) * (kRanks * (kRanks + 1) / 2),
                        "wrong sum at " + std::to_string(i));
    }
    const double waited = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    if (rank != late)
      MYR_CHILD_CHECK(waited > 15.0, "did not wait for the late rank: " + std::to_string(waited) + " s");
    return finishComm(comm, nullptr).empty() ? 0 : 1;
  };
  const ForkOutcome out = forkRanks(kRanks, body, 90s, seed);
  EXPECT_TRUE(out.allSucceeded()) << out.describeFailures();
  // The report follows the chain of waiters to the late rank: "... waits on rank 0 (alive, not in a call: ...".
  const std::string wanted = "rank " + std::to_string(late) + " (alive, not in a call";
  for (int r = 0; r < kRanks; ++r) {
    const std::string log = slurp(std::string(dir) + "/rank" + std::to_string(r) + ".log");
    if (r == late) {
      EXPECT_EQ(log.find("waiting"), std::string::npos) << "the late rank reported a stall:\n" << log;
      continue;
    }
    EXPECT_NE(log.find(" waiting "), std::string::npos) << "rank " << r << " logged no stall report:\n" << log;
    EXPECT_NE(log.find(wanted), std::string::npos) << "rank " << r << "'s report does not say \"" << wanted << "\":\n"
                                                   << log;
    EXPECT_EQ(log.find("myrTimeout"), std::string::npos) << log;
  }
  for (int r = 0; r < kRanks; ++r) unlink((std::string(dir) + "/rank" + std::to_string(r) + ".log").c_str());
  rmdir(dir);
}

INSTANTIATE_TEST_SUITE_P(Mp, LateRank, testing::Values(false, true),
                         [](const testing::TestParamInfo<bool>& i) { return i.param ? "barrier" : "all_reduce"; });

}  // namespace
}  // namespace myriad::test

namespace myriad::test {
namespace {

// A child forked by a rank after init (a data-loader worker) that exits normally runs the rank's atexit
// handlers; it must not tell the peers that the rank left. The peers then wait on that rank (it is late
// before some calls) and must not fail.
TEST(LateRank, AForkedChildThatExitsIsNotTheRankLeaving) {
  auto body = [&](int rank, const myrUniqueId& id) -> int {
    useTransport(Transport::kShm);
    myrComm_t comm = nullptr;
    std::string err = initComm(&comm, 3, id, rank);
    MYR_CHILD_CHECK(err.empty(), err);
    if (rank == 1) {
      const pid_t worker = fork();
      if (worker == 0) std::exit(0);  // atexit handlers run here, in the worker
      int status = 0;
      MYR_CHILD_CHECK(worker > 0 && waitpid(worker, &status, 0) == worker, "fork of the worker failed");
    }
    for (int i = 0; i < 12; ++i) {
      if (rank == 1) std::this_thread::sleep_for(std::chrono::milliseconds(150));
      float one = 1.0f, sum = 0.0f;
      const myrResult_t res = myrAllReduce(&one, &sum, 1, myrFloat32, myrSum, comm, nullptr);
      MYR_CHILD_CHECK(res == myrSuccess && sum == 3.0f, resultText("an all-reduce after the worker exited", res, comm));
    }
    return finishComm(comm, nullptr).empty() ? 0 : 1;
  };
  const ForkOutcome out = forkRanks(3, body, 60s, testSeed());
  EXPECT_TRUE(out.allSucceeded()) << out.describeFailures();
}

}  // namespace
}  // namespace myriad::test
