// algo tier, scatter: every registered scatter.* algorithm (cases from harness.h) x every dtype at per-rank
// counts {0, 1, n-1, 13, 1009} and seeded picks at 65537 and `large` (1<<20 up to 8 ranks, 65537 at 16),
// the root rotated over the list, in place (recvbuff == sendbuff + root * count on the root) and out of
// place. The root's sendbuff must stay as it was; non-roots pass a NULL sendbuff or one left untouched.
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
      bool nullSend = !root && i % 2 == 1, ownBlock = inPlace && root;
      send.resize(root ? total : nullSend ? 0 : bytes, shiftFor(i, c.type)), send.fillCanary();
      if (root)
        for (int p = 0; p < n; ++p) pattern.fill(send.data() + static_cast<size_t>(p) * bytes, bytes, source + p);
      if (!root) pattern.fill(send.data(), send.size(), source + n);  // not the root's: must not be read
      input.assign(send.data(), send.data() + send.size());
      recv.resize(ownBlock ? 0 : bytes, shiftFor(i + 1, c.type)), recv.fillCanary();
      uint8_t* recvbuff = ownBlock ? send.data() + static_cast<size_t>(me) * bytes : recv.data();
      const void* sendbuff = nullSend ? nullptr : send.data();
      auto args = collArgs(CollKind::kScatter, sendbuff, recvbuff, c.count, c.type, myrSum, c.root);
      std::string err = ctx.call(
          args, [&](myrComm_t comm) { return myrScatter(sendbuff, recvbuff, c.count, c.type, c.root, comm, nullptr); });
      if (err.empty()) err = pattern.check(recvbuff, bytes, source + me, 0, "recvbuff");
      if (err.empty()) err = unchanged(send.data(), input, "sendbuff");
      if (err.empty()) err = recv.guardsIntact("recvbuff");
      if (err.empty()) err = send.guardsIntact("sendbuff");
      if (!err.empty()) return what + ": " + err;
    }
  }
  return "";
}

class ScatterAlgo : public ::testing::TestWithParam<Case> {};

TEST_P(ScatterAlgo, EveryRankGetsItsBlock) {
  const Case& c = GetParam();
  uint64_t seed = testSeed();
  auto combos = makeCombos(c.nranks, seed, {.large = c.nranks <= 8 ? size_t{1} << 20 : kPeriod});
  Pattern pattern(seed);
  runCase(c, seed, [&](RankCtx& ctx) { return runAll(ctx, combos, pattern); });
}

INSTANTIATE_TEST_SUITE_P(All, ScatterAlgo, ::testing::ValuesIn(casesFor(CollKind::kScatter)), caseName);

}  // namespace
}  // namespace myriad::test
