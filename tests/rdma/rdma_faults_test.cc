// The rdma transport's edges on Soft-RoCE (inside the VM): point-to-point messages larger than rxe's 8 MiB
// message limit (cut into pieces and striped over QPs; once with the registration cache on), and a rank killed in a
// stream of all-reduces, which every survivor must report naming it (myrRemoteError or myrTimeout) within the deadline.
#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <string>
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

TEST(RdmaKill, SurvivorsNameTheKilledRank) {
  if (!rxeReady()) GTEST_SKIP() << "needs Soft-RoCE devices rxe1/rxe2 (run inside tests/rdma/vm/run-in-vm --rxe)";
  constexpr int kRanks = 3;
  const uint64_t seed = testSeed();
  const int victim = 1 + static_cast<int>(seed % 2);
  const int killAt = 3 + static_cast<int>((seed / 3) % 5);
  auto body = [&](int rank, const myrUniqueId& id) -> int {
    useRdma(rank, 2);
    setenv("MYRIAD_TIMEOUT_MS", "3000", 1);
    myrComm_t comm = nullptr;
    std::string err = initComm(&comm, kRanks, id, rank);
    MYR_CHILD_CHECK(err.empty(), err);
    std::vector<float> send(size_t{1} << 16, 1.0f), recv(send.size());
    auto start = Clock::now();
    for (int it = 0; it < 500; ++it) {
      if (rank == victim && it == killAt) raise(SIGKILL);
      if (it == killAt) start = Clock::now();
      myrResult_t r = myrAllReduce(send.data(), recv.data(), send.size(), myrFloat32, myrSum, comm, nullptr);
      if (r == myrSuccess) continue;
      const std::string text = myrGetLastError(comm) ? myrGetLastError(comm) : "";
      const double s = std::chrono::duration<double>(Clock::now() - start).count();
      childReport("rank " + std::to_string(rank) + " failed after " + std::to_string(s) + " s: " + text);
      MYR_CHILD_CHECK(r == myrRemoteError || r == myrTimeout, resultText("myrAllReduce", r, comm));
      MYR_CHILD_CHECK(mentionsRank(text, victim),
                      "the error does not name rank " + std::to_string(victim) + ": " + text);
      MYR_CHILD_CHECK(s < 30.0, "the error took " + std::to_string(s) + " s");
      myrCommAbort(comm);
      return 0;
    }
    MYR_CHILD_CHECK(false, "500 all-reduces succeeded although rank " + std::to_string(victim) + " was killed");
    return 1;
  };
  const ForkOutcome out = forkRanks(kRanks, body, 120s, seed);
  for (const auto& r : out.ranks) {
    if (r.rank == victim) {
      EXPECT_EQ(r.termSignal, SIGKILL) << r.describe();
      continue;
    }
    EXPECT_TRUE(r.succeeded()) << r.describe() << " (victim " << victim << ", seed " << seed << ")";
  }
}

}  // namespace
}  // namespace myriad::test
