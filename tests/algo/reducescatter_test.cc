// algo tier, reduce-scatter: every registered reducescatter.* algorithm (cases from harness.h) x every dtype
// x every op at per-rank counts {0, 1, n-1, 13, 1009} and seeded picks at 65537 and `large` (1<<20 per rank
// up to 8 ranks, 65537 at 16), in place (recvbuff == sendbuff + rank * recvcount) and out of place, against
// tests/common/reference.* over the whole n * count input. Out of place sendbuff must stay as it was.
#include <gtest/gtest.h>

#include "buffers.h"
#include "harness.h"

namespace myriad::test {
namespace {

std::string runAll(RankCtx& ctx, const std::vector<Combo>& combos, const std::vector<PeriodicReduction>& refs) {
  Guarded send, recv;
  std::vector<uint8_t> input;
  size_t n = static_cast<size_t>(ctx.nranks()), me = static_cast<size_t>(ctx.rank());
  for (size_t i = 0; i < combos.size(); ++i) {
    const Combo& c = combos[i];
    const PeriodicReduction& ref = refs[i];
    size_t bytes = c.count * ref.elemSize();
    for (int inPlace = 0; inPlace < 2; ++inPlace) {
      std::string what = describe(c, true, false) + (inPlace ? " in place" : " out of place");
      send.resize(bytes * n, shiftFor(i, c.type)), send.fillCanary(), ref.fillInput(send.data(), ctx.rank());
      input.assign(send.data(), send.data() + bytes * n);
      recv.resize(inPlace ? 0 : bytes, shiftFor(i + 1, c.type)), recv.fillCanary();
      uint8_t* recvbuff = inPlace ? send.data() + me * bytes : recv.data();
      auto args = collArgs(CollKind::kReduceScatter, send.data(), recvbuff, c.count, c.type, c.op);
      std::string err = ctx.call(args, [&](myrComm_t comm) {
        return myrReduceScatter(send.data(), recvbuff, c.count, c.type, c.op, comm, nullptr);
      });
      if (err.empty()) err = ref.check(recvbuff, me * c.count, c.count);
      if (err.empty() && !inPlace) err = unchanged(send.data(), input, "sendbuff");
      if (err.empty() && !inPlace) err = recv.guardsIntact("recvbuff");
      if (err.empty()) err = send.guardsIntact("sendbuff");
      if (!err.empty()) return what + ": " + err;
    }
  }
  return "";
}

class ReduceScatterAlgo : public ::testing::TestWithParam<Case> {};

TEST_P(ReduceScatterAlgo, MatchesReference) {
  const Case& c = GetParam();
  uint64_t seed = testSeed();
  auto combos = makeCombos(c.nranks, seed, {.reduces = true, .large = c.nranks <= 8 ? size_t{1} << 20 : kPeriod});
  std::vector<PeriodicReduction> refs;
  size_t n = static_cast<size_t>(c.nranks);
  for (const Combo& k : combos) refs.emplace_back(k.type, k.op, c.nranks, k.count * n, k.salt);
  runCase(c, seed, [&](RankCtx& ctx) { return runAll(ctx, combos, refs); });
}

INSTANTIATE_TEST_SUITE_P(All, ReduceScatterAlgo, ::testing::ValuesIn(casesFor(CollKind::kReduceScatter)), caseName);

}  // namespace
}  // namespace myriad::test
