// algo tier, all-to-all: every registered alltoall.* algorithm (cases from harness.h) x every dtype at
// per-peer counts {0, 1, n-1, 13, 1009} and seeded picks at 65537 and `large` (1<<20 per peer up to 4 ranks,
// 65537 beyond, to bound memory at n * n blocks), in place (sendbuff == recvbuff) and out of place. Block
// r of rank p's recvbuff must hold what r sent to p; sendbuff must stay as it was; guards stay canary.
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
  size_t nb = static_cast<size_t>(n);
  for (size_t i = 0; i < combos.size(); ++i) {
    const Combo& c = combos[i];
    size_t bytes = c.count * dataTypeSize(c.type);
    for (int inPlace = 0; inPlace < 2; ++inPlace) {
      std::string what = describe(c, false, false) + (inPlace ? " in place" : " out of place");
      int call = static_cast<int>(i * 2 + static_cast<size_t>(inPlace)) * n * n;  // sources: call + from*n + to
      send.resize(bytes * nb, shiftFor(i, c.type)), send.fillCanary();
      for (int p = 0; p < n; ++p) pattern.fill(send.data() + static_cast<size_t>(p) * bytes, bytes, call + me * n + p);
      input.assign(send.data(), send.data() + bytes * nb);
      recv.resize(inPlace ? 0 : bytes * nb, shiftFor(i + 1, c.type)), recv.fillCanary();
      Guarded& out = inPlace ? send : recv;
      auto args = collArgs(CollKind::kAllToAll, send.data(), out.data(), c.count, c.type);
      std::string err = ctx.call(
          args, [&](myrComm_t comm) { return myrAllToAll(send.data(), out.data(), c.count, c.type, comm, nullptr); });
      for (int r = 0; r < n && err.empty(); ++r)
        err = pattern.check(out.data() + static_cast<size_t>(r) * bytes, bytes, call + r * n + me, 0,
                            "recvbuff block " + std::to_string(r) + ":");
      if (err.empty()) err = out.guardsIntact("recvbuff");
      if (err.empty() && !inPlace) err = unchanged(send.data(), input, "sendbuff");
      if (err.empty() && !inPlace) err = send.guardsIntact("sendbuff");
      if (!err.empty()) return what + ": " + err;
    }
  }
  return "";
}

class AllToAllAlgo : public ::testing::TestWithParam<Case> {};

TEST_P(AllToAllAlgo, EveryBlockFromItsSender) {
  const Case& c = GetParam();
  uint64_t seed = testSeed();
  auto combos = makeCombos(c.nranks, seed, {.large = c.nranks <= 4 ? size_t{1} << 20 : kPeriod});
  Pattern pattern(seed);
  runCase(c, seed, [&](RankCtx& ctx) { return runAll(ctx, combos, pattern); });
}

INSTANTIATE_TEST_SUITE_P(All, AllToAllAlgo, ::testing::ValuesIn(casesFor(CollKind::kAllToAll)), caseName);

}  // namespace
}  // namespace myriad::test
