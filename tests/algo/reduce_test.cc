// algo tier, reduce: every registered reduce.* algorithm (cases from harness.h) x every dtype x every op at
// counts {0, 1, n-1, 13, 1009} and seeded picks at 65537 and 1<<20 (makeCombos), the root rotated over the
// list, in place and out of place, against tests/common/reference.*. Only the root's recvbuff may change:
// a non-root's sendbuff (in place: its recvbuff too) stays as it was; out of place it passes a NULL recvbuff
// or a canary one that must stay untouched (alternately).
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
    bool root = ctx.rank() == c.root;
    for (int inPlace = 0; inPlace < 2; ++inPlace) {
      std::string what = describe(c, true, true) + (inPlace ? " in place" : " out of place");
      bool nullRecv = !inPlace && !root && i % 2 == 1;
      send.resize(bytes, shiftFor(i, c.type)), send.fillCanary(), ref.fillInput(send.data(), ctx.rank());
      input.assign(send.data(), send.data() + bytes);
      recv.resize(inPlace ? 0 : bytes, shiftFor(i + 1, c.type)), recv.fillCanary();
      Guarded& out = inPlace ? send : recv;
      void* recvbuff = nullRecv ? nullptr : out.data();
      auto args = collArgs(CollKind::kReduce, send.data(), recvbuff, c.count, c.type, c.op, c.root);
      std::string err = ctx.call(args, [&](myrComm_t comm) {
        return myrReduce(send.data(), recvbuff, c.count, c.type, c.op, c.root, comm, nullptr);
      });
      if (err.empty() && root) err = ref.check(out.data(), 0, c.count);
      if (err.empty() && !root && !inPlace && !nullRecv) err = recv.untouched(0, bytes, "non-root recvbuff");
      if (err.empty() && (!root || !inPlace)) err = unchanged(send.data(), input, "sendbuff");
      if (err.empty()) err = out.guardsIntact("recvbuff");
      if (err.empty()) err = send.guardsIntact("sendbuff");
      if (!err.empty()) return what + ": " + err;
    }
  }
  return "";
}

class ReduceAlgo : public ::testing::TestWithParam<Case> {};

TEST_P(ReduceAlgo, MatchesReference) {
  const Case& c = GetParam();
  uint64_t seed = testSeed();
  auto combos = makeCombos(c.nranks, seed, {.reduces = true});
  std::vector<PeriodicReduction> refs;
  for (const Combo& k : combos) refs.emplace_back(k.type, k.op, c.nranks, k.count, k.salt);
  runCase(c, seed, [&](RankCtx& ctx) { return runAll(ctx, combos, refs); });
}

INSTANTIATE_TEST_SUITE_P(All, ReduceAlgo, ::testing::ValuesIn(casesFor(CollKind::kReduce)), caseName);

}  // namespace
}  // namespace myriad::test
