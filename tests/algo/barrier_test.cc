// algo tier, barrier: every registered barrier.* algorithm (cases from harness.h) x 40 rounds. Ranks share an
// atomic arrival counter; each round one seeded rank arrives late (sleeps), and no rank may leave round k
// before the counter shows all n arrivals of round k. Also a barrier issued on a host stream.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <random>
#include <thread>

#include "harness.h"

namespace myriad::test {
namespace {

constexpr int kRounds = 40;

class BarrierAlgo : public ::testing::TestWithParam<Case> {};

TEST_P(BarrierAlgo, NobodyLeavesEarly) {
  const Case& c = GetParam();
  uint64_t seed = testSeed();
  std::vector<int> late(kRounds);
  std::mt19937_64 rng(seed);
  for (int& r : late) r = static_cast<int>(rng() % static_cast<uint64_t>(c.nranks));
  std::atomic<int> arrived{0};
  runCase(c, seed, [&](RankCtx& ctx) -> std::string {
    auto args = collArgs(CollKind::kBarrier, nullptr, nullptr, 0, myrFloat32);
    for (int k = 0; k < kRounds; ++k) {
      if (ctx.rank() == late[static_cast<size_t>(k)]) std::this_thread::sleep_for(std::chrono::milliseconds(3));
      arrived.fetch_add(1);
      bool onStream = k == kRounds - 1;
      std::string err = ctx.call(args, [&](myrComm_t comm) {
        if (!onStream) return myrBarrier(comm, nullptr);
        myrStream_t stream = nullptr;
        myrResult_t rc = myrStreamCreate(&stream);
        if (rc == myrSuccess) rc = myrBarrier(comm, stream);
        if (rc == myrSuccess) rc = myrStreamSynchronize(stream);
        if (stream) myrStreamDestroy(stream);
        return rc;
      });
      if (!err.empty()) return "round " + std::to_string(k) + ": " + err;
      int seen = arrived.load();
      if (seen < c.nranks * (k + 1))
        return "left barrier round " + std::to_string(k) + " when only " + std::to_string(seen - c.nranks * k) +
               " of " + std::to_string(c.nranks) + " ranks had arrived (late rank " +
               std::to_string(late[static_cast<size_t>(k)]) + ")";
    }
    return "";
  });
}

INSTANTIATE_TEST_SUITE_P(All, BarrierAlgo, ::testing::ValuesIn(casesFor(CollKind::kBarrier)), caseName);

}  // namespace
}  // namespace myriad::test
