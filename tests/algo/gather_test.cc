// algo tier, gather: every registered gather.* algorithm (cases from harness.h) x every dtype at per-rank
// counts {0, 1, n-1, 13, 1009} and seeded picks at 65537 and `large` (1<<20 up to 8 ranks, 65537 at 16),
// the root rotated over the list, in place (sendbuff == recvbuff + root * count on the root) and out of
// place. Non-roots pass a NULL recvbuff or a canary one that must stay untouched (alternately).
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
    size_t bytes = c.count * dataTypeSize(c.type), total = bytes * static_cast<size_t>(n);
    bool root = me == c.root;
    for (int inPlace = 0; inPlace < 2; ++inPlace) {
      std::string what = describe(c, false, true) + (inPlace ? " in place" : " out of place");
      int source = static_cast<int>(i * 2 + static_cast<size_t>(inPlace)) * n;
      bool nullRecv = !root && i % 2 == 1, ownBlock = inPlace && root;
      recv.resize(root || !nullRecv ? total : 0, shiftFor(i + 1, c.type)), recv.fillCanary();
      send.resize(ownBlock ? 0 : bytes, shiftFor(i, c.type)), send.fillCanary();
      uint8_t* sendbuff = ownBlock ? recv.data() + static_cast<size_t>(me) * bytes : send.data();
      void* recvbuff = nullRecv ? nullptr : recv.data();
      pattern.fill(sendbuff, bytes, source + me);
      input.assign(sendbuff, sendbuff + bytes);
      auto args = collArgs(CollKind::kGather, sendbuff, recvbuff, c.count, c.type, myrSum, c.root);
      std::string err = ctx.call(
          args, [&](myrComm_t comm) { return myrGather(sendbuff, recvbuff, c.count, c.type, c.root, comm, nullptr); });
      for (int r = 0; r < n && root && err.empty(); ++r)
        err = pattern.check(recv.data() + static_cast<size_t>(r) * bytes, bytes, source + r, 0,
                            "root's recvbuff block " + std::to_string(r) + ":");
      if (err.empty() && !root) err = recv.untouched(0, recv.size(), "non-root recvbuff");
      if (err.empty() && !ownBlock) err = unchanged(send.data(), input, "sendbuff");
      if (err.empty()) err = recv.guardsIntact("recvbuff");
      if (err.empty()) err = send.guardsIntact("sendbuff");
      if (!err.empty()) return what + ": " + err;
    }
  }
  return "";
}

class GatherAlgo : public ::testing::TestWithParam<Case> {};

TEST_P(GatherAlgo, RootHoldsEveryBlock) {
  const Case& c = GetParam();
  uint64_t seed = testSeed();
  auto combos = makeCombos(c.nranks, seed, {.large = c.nranks <= 8 ? size_t{1} << 20 : kPeriod});
  Pattern pattern(seed);
  runCase(c, seed, [&](RankCtx& ctx) { return runAll(ctx, combos, pattern); });
}

INSTANTIATE_TEST_SUITE_P(All, GatherAlgo, ::testing::ValuesIn(casesFor(CollKind::kGather)), caseName);

}  // namespace
}  // namespace myriad::test
