// algo tier, broadcast: every registered broadcast.* algorithm (cases from harness.h) x every dtype at counts
// {0, 1, n-1, 13, 1009} and seeded picks at 65537 and 1<<20 (makeCombos), the root rotated over the list so
// every root meets many counts and types, in place (sendbuff == recvbuff) and out of place. Out of place a
// non-root passes NULL or a sendbuff that must stay untouched (alternately); the root's sendbuff too.
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
    size_t bytes = c.count * dataTypeSize(c.type);
    for (int inPlace = 0; inPlace < 2; ++inPlace) {
      std::string what = describe(c, false, true) + (inPlace ? " in place" : " out of place");
      int source = static_cast<int>(i * 2 + static_cast<size_t>(inPlace)) * n;  // distinct data per call
      bool root = me == c.root, nullSend = !inPlace && !root && i % 2 == 1;
      send.resize(bytes, shiftFor(i, c.type)), send.fillCanary();
      pattern.fill(send.data(), bytes, source + me);
      input.assign(send.data(), send.data() + bytes);
      if (inPlace && !root) send.fillCanary();
      recv.resize(inPlace ? 0 : bytes, shiftFor(i + 1, c.type)), recv.fillCanary();
      Guarded& out = inPlace ? send : recv;
      const void* sendbuff = nullSend ? nullptr : send.data();
      auto args = collArgs(CollKind::kBroadcast, sendbuff, out.data(), c.count, c.type, myrSum, c.root);
      std::string err = ctx.call(args, [&](myrComm_t comm) {
        return myrBroadcast(sendbuff, out.data(), c.count, c.type, c.root, comm, nullptr);
      });
      if (err.empty()) err = pattern.check(out.data(), bytes, source + c.root, 0, "recvbuff");
      if (err.empty()) err = out.guardsIntact("recvbuff");
      if (err.empty() && !inPlace && !nullSend) err = unchanged(send.data(), input, "sendbuff");
      if (err.empty() && !inPlace) err = send.guardsIntact("sendbuff");
      if (!err.empty()) return what + ": " + err;
    }
  }
  return "";
}

class BroadcastAlgo : public ::testing::TestWithParam<Case> {};

TEST_P(BroadcastAlgo, MatchesRoot) {
  const Case& c = GetParam();
  uint64_t seed = testSeed();
  auto combos = makeCombos(c.nranks, seed, {});
  Pattern pattern(seed);
  runCase(c, seed, [&](RankCtx& ctx) { return runAll(ctx, combos, pattern); });
}

INSTANTIATE_TEST_SUITE_P(All, BroadcastAlgo, ::testing::ValuesIn(casesFor(CollKind::kBroadcast)), caseName);

}  // namespace
}  // namespace myriad::test
