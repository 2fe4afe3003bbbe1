// The rdma transport's edges on Soft-RoCE (inside the VM): point-to-point messages larger than rxe's 8 MiB
// message limit (cut into pieces and striped over QPs; once with the registration cache on), and a rank killed in a
// stream of all-reduces, which every survivor must report naming it (myrRemoteError) within 3 s.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <new>
#include <string>
#include <thread>
#include <vector>

#include "myriad/myriad.h"
#include "tests/common/fork_ranks.h"
#include "tests/common/mp_helpers.h"
#include "tests/rdma/rdma_env.h"

namespace myriad::test {
namespace {

using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

uint8_t pattern(size_t i, uint64_t salt) {
  return static_cast<uint8_t>((i * 2654435761u + salt) >> 7);
}

struct LargeParam {
  int qps;
  bool regCache;  // MYRIAD_IB_REG_CACHE=1: the second round finds the buffer's registration again
};

class RdmaLarge : public testing::TestWithParam<LargeParam> {};

TEST_P(RdmaLarge, SendRecvAboveMaxMessageSize) {
  if (!rxeReady()) GTEST_SKIP() << "needs Soft-RoCE devices rxe1/rxe2 (run inside tests/rdma/vm/run-in-vm --rxe)";
  const int qps = GetParam().qps;
  const bool regCache = GetParam().regCache;
  const size_t bytes = (size_t{20} << 20) + 5;  // two and a half times rxe's 8 MiB limit, odd
  const uint64_t seed = testSeed();
  auto body = [&](int rank, const myrUniqueId& id) -> int {
    useRdma(rank, qps);
    // One 8 MiB piece can take seconds under emulation (the host's other load included); the receiver
    // sees nothing of it until it lands.
    setenv("MYRIAD_TIMEOUT_MS", "60000", 1);
    setenv("MYRIAD_IB_REG_CACHE", regCache ? "1" : "0", 1);
    return runInChild(2, rank, id, false, [&](myrComm_t comm, myrStream_t) -> std::string {
      std::vector<uint8_t> buf(bytes + 64, 0xEE);  // one buffer for both rounds, as the cache requires
      for (int round = 0; round < 2; ++round) {    // each direction once
        const int sender = round;
        if (rank == sender) {
          for (size_t i = 0; i < bytes; ++i) buf[i] = pattern(i, seed + static_cast<uint64_t>(round));
          myrResult_t r = myrSend(buf.data(), bytes, myrUint8, 1 - rank, comm, nullptr);
          if (r != myrSuccess) return resultText("myrSend", r, comm);
        } else {
          std::fill(buf.begin(), buf.end(), 0xEE);
          myrResult_t r = myrRecv(buf.data(), bytes, myrUint8, 1 - rank, comm, nullptr);
          if (r != myrSuccess) return resultText("myrRecv", r, comm);
          for (size_t i = 0; i < bytes; ++i)
            if (buf[i] != pattern(i, seed + static_cast<uint64_t>(round)))
              return "byte " + std::to_string(i) + " of " + std::to_string(bytes) + " differs in round " +
                     std::to_string(round);
          for (size_t i = bytes; i < buf.size(); ++i)
            if (buf[i] != 0xEE) return "byte " + std::to_string(i) + " past the message was written";
        }
      }
      return "";
    });
  };
  const ForkOutcome out = forkRanks(2, body, 240s, seed);
  ASSERT_TRUE(out.allSucceeded()) << out.describeFailures();
}

INSTANTIATE_TEST_SUITE_P(Rxe, RdmaLarge,
                         testing::Values(LargeParam{1, false}, LargeParam{3, false}, LargeParam{2, true}),
                         [](const testing::TestParamInfo<LargeParam>& i) {
                           return "qp" + std::to_string(i.param.qps) + (i.param.regCache ? "_regcache" : "");
                         });

// Issue 18: every survivor names the dead rank within 3 s, trial after trial (MYRIAD_TEST_TRIALS, 10 by
// default in the VM), the victim SIGKILLed by its own thread in the middle of the all-reduces. Ranks are on
// two emulated hosts: a victim of the other host is seen through its heartbeats or its QPs, one of the same
// host through a pidfd. The detection times go to the suite's summary as notes.
TEST(RdmaKill, SurvivorsNameTheKilledRankWithinThreeSeconds) {
  if (!rxeReady()) GTEST_SKIP() << "needs Soft-RoCE devices rxe1/rxe2 (run inside tests/rdma/vm/run-in-vm --rxe)";
  constexpr int kRanks = 3;
  const char* env = std::getenv("MYRIAD_TEST_TRIALS");
  const int trials = env && std::atoi(env) > 0 ? std::atoi(env) : 10;
  void* page =
      mmap(nullptr, sizeof(std::atomic<int64_t>) * 4, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  ASSERT_NE(page, MAP_FAILED);
  auto* killNs = new (page) std::atomic<int64_t>(0);
  auto* detectNs = new (static_cast<std::atomic<int64_t>*>(page) + 1) std::atomic<int64_t>[kRanks];
  auto nowNs = [] {
    return std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now().time_since_epoch()).count();
  };
  std::vector<double> seconds;
  for (int t = 0; t < trials; ++t) {
    const uint64_t seed = testSeed() + static_cast<uint64_t>(t);
    const int victim = 1 + static_cast<int>(seed % 2);
    const auto killAfter = std::chrono::milliseconds(50 + static_cast<int>((seed / 3) % 300));
    killNs->store(0);
    for (int r = 0; r < kRanks; ++r) detectNs[r].store(0);
    auto body = [&](int rank, const myrUniqueId& id) -> int {
      useRdma(rank, 2);
      myrComm_t comm = nullptr;
      std::string err = initComm(&comm, kRanks, id, rank);
      MYR_CHILD_CHECK(err.empty(), err);
      if (rank == victim) {
        std::thread([&] {
          std::this_thread::sleep_for(killAfter);
          killNs->store(nowNs());
          raise(SIGKILL);
        }).detach();
      }
      std::vector<float> send(size_t{1} << 16, 1.0f), recv(send.size());
      for (int it = 0; it < 100000; ++it) {
        myrResult_t r = myrAllReduce(send.data(), recv.data(), send.size(), myrFloat32, myrSum, comm, nullptr);
        if (r == myrSuccess) continue;
        const int64_t at = nowNs();
        const std::string text = myrGetLastError(comm) ? myrGetLastError(comm) : "";
        MYR_CHILD_CHECK(killNs->load() != 0, "failed before the victim died: " + text);
        detectNs[rank].store(at - killNs->load());
        MYR_CHILD_CHECK(r == myrRemoteError, resultText("myrAllReduce", r, comm));
        MYR_CHILD_CHECK(mentionsRank(text, victim),
                        "the error does not name rank " + std::to_string(victim) + ": " + text);
        myrCommAbort(comm);
        return 0;
      }
      MYR_CHILD_CHECK(false, "all-reduces went on although rank " + std::to_string(victim) + " was killed");
      return 1;
    };
    const ForkOutcome out = forkRanks(kRanks, body, 120s, seed);
    for (const auto& r : out.ranks) {
      if (r.rank == victim) {
        EXPECT_EQ(r.termSignal, SIGKILL) << r.describe();
        continue;
      }
      ASSERT_TRUE(r.succeeded()) << r.describe() << " (victim " << victim << ", seed " << seed << ")";
      const double s = static_cast<double>(detectNs[r.rank].load()) / 1e9;
      seconds.push_back(s);
      EXPECT_LT(s, 3.0) << "rank " << r.rank << " named the death of rank " << victim << " after " << s << " s (seed "
                        << seed << ")";
    }
  }
  munmap(page, sizeof(std::atomic<int64_t>) * 4);
  std::sort(seconds.begin(), seconds.end());
  ASSERT_FALSE(seconds.empty());
  std::printf("note: rdma death detection: %d trials, %zu survivors: median %.3f s, max %.3f s\n", trials,
              seconds.size(), seconds[seconds.size() / 2], seconds.back());
}

}  // namespace
}  // namespace myriad::test
