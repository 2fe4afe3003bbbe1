// myrCommShrink that cannot succeed fails clearly on every survivor, within a bound, instead of hanging:
// survivors that pass different exclude lists (myrInvalidUsage naming both lists), a survivor that never
// calls it (myrTimeout naming that rank after initTimeoutMs), and a rendezvous store that died with its host,
// rank 0 (MYRIAD_COMM_ID: rank 0 hosts the store), killed between two all-reduces (myrRemoteError saying the
// store is gone and that a new communicator needs myrCommInitRank).
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
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

// The shrink under test, timed; "" when it returned `want` with `word` in comm's last error within `seconds`.
std::string expectShrinkError(myrComm_t comm, std::vector<int> excluded, myrConfig_t* config, int flags,
                              myrResult_t want, const char* word, double seconds) {
  myrComm_t child = nullptr;
  const auto t0 = Clock::now();
  const myrResult_t res =
      myrCommShrink(comm, excluded.data(), static_cast<int>(excluded.size()), &child, config, flags);
  const double took = std::chrono::duration<double>(Clock::now() - t0).count();
  if (child != nullptr) (void)myrCommDestroy(child);
  std::string err = expectError("myrCommShrink", res, want, comm, word);
  if (err.empty() && child != nullptr) err = "myrCommShrink failed but set newcomm";
  if (err.empty() && took > seconds)
    err = "myrCommShrink took " + std::to_string(took) + " s, more than " + std::to_string(seconds);
  return err;
}

myrConfig_t initTimeout(int ms) {
  myrConfig_t config = MYR_CONFIG_INITIALIZER;
  config.initTimeoutMs = ms;
  return config;
}

// Ranks 0 and 1 exclude 3; rank 2 excludes 1 (3 stays out of it and destroys its communicator).
TEST(ShrinkRefused, SurvivorsWithDifferentLists) {
  constexpr int kRanks = 4;
  auto body = [&](int rank, const myrUniqueId& id) -> int {
    return runInChild(kRanks, rank, id, false, [&](myrComm_t comm, myrStream_t) -> std::string {
      if (rank == 3) return "";
      myrConfig_t config = initTimeout(10000);
      return expectShrinkError(comm, rank == 2 ? std::vector<int>{1} : std::vector<int>{3}, &config, MYR_SHRINK_DEFAULT,
                               myrInvalidUsage, "same list", 8.0);
    });
  };
  const ForkOutcome out = forkRanks(kRanks, body, 60s, testSeed());
  ASSERT_TRUE(out.allSucceeded()) << out.describeFailures();
}

// Rank 2 neither calls shrink nor is excluded: ranks 0 and 1 fail after initTimeoutMs (1.5 s), naming it.
TEST(ShrinkRefused, ASurvivorThatNeverCalls) {
  constexpr int kRanks = 3;
  auto body = [&](int rank, const myrUniqueId& id) -> int {
    return runInChild(kRanks, rank, id, false, [&](myrComm_t comm, myrStream_t) -> std::string {
      if (rank == 2) {
        std::this_thread::sleep_for(3s);  // alive through the others' whole wait
        return "";
      }
      myrConfig_t config = initTimeout(1500);
      return expectShrinkError(comm, {}, &config, MYR_SHRINK_DEFAULT, myrTimeout, "{2}", 6.0);
    });
  };
  const ForkOutcome out = forkRanks(kRanks, body, 60s, testSeed());
  ASSERT_TRUE(out.allSucceeded()) << out.describeFailures();
}

// A loopback port nobody listens on now (the kernel's pick for port 0); 0 when none could be had.
int freeLoopbackPort() {
  const int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof(a);
  int port = 0;
  if (fd >= 0 && bind(fd, reinterpret_cast<sockaddr*>(&a), len) == 0 &&
      getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len) == 0)
    port = ntohs(a.sin_port);
  if (fd >= 0) close(fd);
  return port;
}

TEST(ShrinkRefused, TheStoreDiedWithRankZero) {
  const int port = freeLoopbackPort();
  ASSERT_NE(port, 0) << "no free loopback port";
  constexpr int kRanks = 3;
  auto body = [&](int rank, const myrUniqueId&) -> int {
    setenv("MYRIAD_COMM_ID", ("127.0.0.1:" + std::to_string(port)).c_str(), 1);
    setenv("MYRIAD_TIMEOUT_MS", "2000", 1);
    myrUniqueId id;
    MYR_CHILD_CHECK(myrGetUniqueId(&id) == myrSuccess, myrGetLastError(nullptr));
    myrComm_t comm = nullptr;
    const myrResult_t init = myrCommInitRank(&comm, kRanks, id, rank);
    MYR_CHILD_CHECK(init == myrSuccess, resultText("myrCommInitRank", init, nullptr));
    std::vector<float> buf(1024, 1.0f);
    myrResult_t res = myrSuccess;
    for (int it = 0; it < 100 && res == myrSuccess; ++it) {
      if (rank == 0 && it == 3) raise(SIGKILL);
      res = myrAllReduce(buf.data(), buf.data(), buf.size(), myrFloat32, myrMax, comm, nullptr);
    }
    MYR_CHILD_CHECK(res != myrSuccess, "the all-reduces never failed");
    const std::string err =
        expectShrinkError(comm, {0}, nullptr, MYR_SHRINK_ABORT, myrRemoteError, "rendezvous store", 10.0);
    MYR_CHILD_CHECK(err.empty(), err);
    MYR_CHILD_CHECK(containsWord(myrGetLastError(comm), "myrCommInitRank"),
                    std::string("the error does not say what to do: ") + myrGetLastError(comm));
    (void)myrCommDestroy(comm);
    return 0;
  };
  const ForkOutcome out = forkRanksWithoutId(kRanks, body, 60s, testSeed());
  ASSERT_EQ(out.ranks.size(), static_cast<size_t>(kRanks)) << out.describeFailures();
  EXPECT_EQ(out.ranks[0].termSignal, SIGKILL) << out.ranks[0].describe();
  for (int r = 1; r < kRanks; ++r)
    EXPECT_TRUE(out.ranks[static_cast<size_t>(r)].succeeded()) << out.ranks[static_cast<size_t>(r)].describe();
}

}  // namespace
}  // namespace myriad::test
