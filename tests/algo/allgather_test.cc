// algo tier, all-gather: every registered allgather.* algorithm (cases from harness.h) x every dtype at
// per-rank counts {0, 1, n-1, 13, 1009} and seeded picks at 65537 and `large` (makeCombos; 1<<20 per rank up
// to 8 ranks, 65537 at 16 to bound memory), in place (sendbuff == recvbuff + rank * count) and out of place.
// Every block must hold its rank's data, the send buffer stay as it was, and the guards stay canary.
#include <gtest/gtest.h>

#include "buffers.h"
#include "harness.h"
#include "tests/common/dtype_values.h"

namespace myriad::test {
namespace {

std::string runAll(RankCtx& ctx, const std::vector<Combo>& combos, const Pattern& pattern) {
  Guarded send, recv;
  std::vector<uint8_t> input;
  int n = ctx.nranks(), me = ctx.rank();
  for (size_t i = 0; i < combos.size(); ++i) {
    const Combo& c = combos[i];
    size_t bytes = c.count * dataTypeSize(c.type), mine = static_cast<size_t>(me) * bytes;
    for (int inPlace = 0; inPlace < 2; ++inPlace) {
      std::string what = describe(c, false, false) + (inPlace ? " in place" : " out of place");
      int source = static_cast<int>(i * 2 + static_cast<size_t>(inPlace)) * n;
      recv.resize(bytes * static_cast<size_t>(n), shiftFor(i + 1, c.type)), recv.fillCanary();
      send.resize(inPlace ? 0 : bytes, shiftFor(i, c.type)), send.fillCanary();
      uint8_t* sendbuff = inPlace ? recv.data() + mine : send.data();
      pattern.fill(sendbuff, bytes, source + me);
      input.assign(sendbuff, sendbuff + bytes);
      auto args = collArgs(CollKind::kAllGather, sendbuff, recv.data(), c.count, c.type);
      std::string err = ctx.call(
          args, [&](myrComm_t comm) { return myrAllGather(sendbuff, recv.data(), c.count, c.type, comm, nullptr); });
      for (int r = 0; r < n && err.empty(); ++r)
        err = pattern.check(recv.data() + static_cast<size_t>(r) * bytes, bytes, source + r, 0,
                            "recvbuff block " + std::to_string(r) + ":");
      if (err.empty()) err = recv.guardsIntact("recvbuff");
      if (err.empty() && !inPlace) err = unchanged(send.data(), input, "sendbuff");
      if (err.empty() && !inPlace) err = send.guardsIntact("sendbuff");
      if (!err.empty()) return what + ": " + err;
    }
  }
  return "";
}

class AllGatherAlgo : public ::testing::TestWithParam<Case> {};

TEST_P(AllGatherAlgo, EveryBlockFromItsRank) {
  const Case& c = GetParam();
  uint64_t seed = testSeed();
  auto combos = makeCombos(c.nranks, seed, {.large = c.nranks <= 8 ? size_t{1} << 20 : kPeriod});
  Pattern pattern(seed);
  runCase(c, seed, [&](RankCtx& ctx) { return runAll(ctx, combos, pattern); });
}

INSTANTIATE_TEST_SUITE_P(All, AllGatherAlgo, ::testing::ValuesIn(casesFor(CollKind::kAllGather)), caseName);

}  // namespace
}  // namespace myriad::test
