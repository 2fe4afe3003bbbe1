// A hang read back from the flight records: three ranks run three all-reduces; one of them (chosen by the
// seed) never enters the fourth, so the other two fail after MYRIAD_TIMEOUT_MS (2 s here) and write their
// records through MYRIAD_DUMP_ON_ERROR; the late rank, once it sees their files, writes its own with
// myrCommDump. myriad-trace, run on the directory, must name the late rank as the first culprit.
#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <string>
#include <thread>
#include <vector>

#include "myriad/myriad.h"
#include "tests/common/fork_ranks.h"
#include "tests/common/mp_helpers.h"

namespace myriad::test {
namespace {

using namespace std::chrono_literals;
namespace fs = std::filesystem;

constexpr int kRanks = 3;
constexpr int kCallsBeforeHang = 3;
constexpr size_t kCount = 2;  // 8 bytes

// The MYRIAD_DUMP_ON_ERROR files in `dir` of ranks other than `except`.
int dumpsOfOthers(const std::string& dir, int except) {
  int n = 0;
  std::error_code ec;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    const std::string name = it->path().filename().string();
    if (name.rfind("myriad-", 0) == 0 && name.size() > 5 && name.substr(name.size() - 5) == ".json" &&
        name.find("-rank" + std::to_string(except) + ".json") == std::string::npos)
      ++n;
  }
  return n;
}

std::string allReduce(myrComm_t comm, float value) {
  std::vector<float> send(kCount, value), recv(kCount, 0);
  myrResult_t r = myrAllReduce(send.data(), recv.data(), kCount, myrFloat32, myrSum, comm, nullptr);
  return r == myrSuccess ? "" : resultText("myrAllReduce", r, comm);
}

int rankBody(int rank, const myrUniqueId& id, int late, const std::string& dir) {
  useTransport(Transport::kShm);
  setenv("MYRIAD_TIMEOUT_MS", "2000", 1);
  setenv("MYRIAD_DUMP_ON_ERROR", dir.c_str(), 1);
  myrComm_t comm = nullptr;
  std::string err = initComm(&comm, kRanks, id, rank);
  MYR_CHILD_CHECK(err.empty(), err);
  for (int i = 0; i < kCallsBeforeHang; ++i) {
    err = allReduce(comm, static_cast<float>(rank));
    MYR_CHILD_CHECK(err.empty(), "call " + std::to_string(i + 1) + ": " + err);
  }
  if (rank != late) {
    err = allReduce(comm, 1.0f);
    MYR_CHILD_CHECK(!err.empty(), "the 4th all-reduce succeeded without rank " + std::to_string(late));
    childReport("4th all-reduce failed as expected: " + err);
    myrCommAbort(comm);
    return 0;
  }
  // The late rank: asleep until the others have failed and dumped, then it dumps without entering call 4.
  auto deadline = std::chrono::steady_clock::now() + 30s;
  while (dumpsOfOthers(dir, rank) < kRanks - 1 && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(50ms);
  MYR_CHILD_CHECK(dumpsOfOthers(dir, rank) == kRanks - 1,
                  "the other ranks wrote " + std::to_string(dumpsOfOthers(dir, rank)) + " dumps in 30 s");
  const std::string path = dir + "/late-rank" + std::to_string(rank) + ".json";
  myrResult_t r = myrCommDump(comm, path.c_str());
  MYR_CHILD_CHECK(r == myrSuccess, resultText("myrCommDump", r, comm));
  myrCommAbort(comm);
  return 0;
}

// Runs `command`, returning its exit status and everything it printed.
int runTool(const std::string& command, std::string* output) {
  FILE* p = popen((command + " 2>&1").c_str(), "r");
  if (!p) return -1;
  char buf[4096];
  size_t n = 0;
  while ((n = fread(buf, 1, sizeof buf, p)) > 0) output->append(buf, n);
  int status = pclose(p);
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

TEST(FlightTrace, NamesTheRankThatNeverEnteredTheCall) {
#ifndef MYRIAD_TRACE_BIN
  GTEST_SKIP() << "myriad-trace is not built (it needs nlohmann-json and CLI11)";
#else
  const uint64_t seed = testSeed();
  const int late = static_cast<int>(seed % kRanks);
  char tmpl[] = "/tmp/myriad-flight-XXXXXX";
  ASSERT_NE(mkdtemp(tmpl), nullptr);
  const std::string dir = tmpl;
  ForkOutcome out = forkRanks(
      kRanks, [&](int rank, const myrUniqueId& id) { return rankBody(rank, id, late, dir); }, 60s, seed);
  ASSERT_TRUE(out.setupError.empty()) << out.setupError;
  EXPECT_TRUE(out.allSucceeded()) << out.describeFailures() << "late rank " << late << ", seed " << seed;
  std::string report;
  const int rc = runTool(std::string(MYRIAD_TRACE_BIN) + " " + dir, &report);
  std::printf("myriad-trace %s (late rank %d, seed %llu):\n%s", dir.c_str(), late,
              static_cast<unsigned long long>(seed), report.c_str());
  EXPECT_EQ(rc, 0) << report;
  // The culprit line names the late rank, and why.
  const std::string want = "first culprit: rank " + std::to_string(late) + " (";
  EXPECT_NE(report.find(want), std::string::npos)
      << "late rank " << late << ", seed " << seed << "; myriad-trace said:\n"
      << report;
  EXPECT_NE(report.find("late / not entered"), std::string::npos) << report;
  EXPECT_NE(report.find("not entered by rank " + std::to_string(late)), std::string::npos) << report;
  // Every rank's record is there: three dumps, no rank reported missing.
  EXPECT_EQ(report.find("no dump"), std::string::npos) << report;
  std::error_code ec;
  if (!HasFailure()) fs::remove_all(dir, ec);
#endif
}

}  // namespace
}  // namespace myriad::test
