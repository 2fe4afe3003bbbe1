// algo tier, all-reduce: every registered allreduce.* algorithm (harness.h picks ranks and host layouts) x
// every dtype x every op at counts {0, 1, n-1, 13, 1009}, plus seeded picks at 65537 and 1<<20 (makeCombos),
// in place and out of place, against tests/common/reference.*. Out of place the send buffer must be left
// as it was; either way nothing outside the count elements of recvbuff may change (canaries).
#include <gtest/gtest.h>

#include "buffers.h"
#include "harness.h"

namespace myriad::test {
namespace {

std::string runAll(RankCtx& ctx, const std::vector<Combo>& combos, const std::vector<PeriodicReduction>& refs) {
  Guarded send, recv;
  std::vector<uint8_t> input;
  for (size_t i = 0; i < combos.size(); ++i) {
    const Combo& c = combos[i];
    const PeriodicReduction& ref = refs[i];
    size_t bytes = c.count * ref.elemSize();
    for (int inPlace = 0; inPlace < 2; ++inPlace) {
      std::string what = describe(c, true, false) + (inPlace ? " in place" : " out of place");
      send.resize(bytes, shiftFor(i, c.type)), send.fillCanary(), ref.fillInput(send.data(), ctx.rank());
      input.assign(send.data(), send.data() + bytes);
      recv.resize(inPlace ? 0 : bytes, shiftFor(i + 1, c.type)), recv.fillCanary();
      Guarded& out = inPlace ? send : recv;
      auto args = collArgs(CollKind::kAllReduce, send.data(), out.data(), c.count, c.type, c.op);
      std::string err = ctx.call(args, [&](myrComm_t comm) {
        return myrAllReduce(send.data(), out.data(), c.count, c.type, c.op, comm, nullptr);
      });
      if (err.empty()) err = ref.check(out.data(), 0, c.count);
      if (err.empty()) err = out.guardsIntact("recvbuff");
      if (err.empty() && !inPlace) err = unchanged(send.data(), input, "sendbuff");
      if (err.empty() && !inPlace) err = send.guardsIntact("sendbuff");
      if (!err.empty()) return what + ": " + err;
    }
  }
  return "";
}

class AllReduceAlgo : public ::testing::TestWithParam<Case> {};

TEST_P(AllReduceAlgo, MatchesReference) {
  const Case& c = GetParam();
  uint64_t seed = testSeed();
  auto combos = makeCombos(c.nranks, seed, {.reduces = true});
  std::vector<PeriodicReduction> refs;
  for (const Combo& k : combos) refs.emplace_back(k.type, k.op, c.nranks, k.count, k.salt);
  runCase(c, seed, [&](RankCtx& ctx) { return runAll(ctx, combos, refs); });
}

INSTANTIATE_TEST_SUITE_P(All, AllReduceAlgo, ::testing::ValuesIn(casesFor(CollKind::kAllReduce)), caseName);

}  // namespace
}  // namespace myriad::test
