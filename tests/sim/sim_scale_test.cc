// 1,024 ranks on the deterministic executor: the flat algorithms that carry large jobs (all-reduce ring, tree
// and halving-doubling, all-gather, reduce-scatter, all-to-all pairwise, broadcast ring and tree, reduce,
// gather, scatter, barrier) on one host, and the hierarchical ones on 32 hosts of 32. Algorithms whose every
// rank has O(n) steps (rings, pairwise, hier all-to-all and reduce-scatter: 1-2M steps a call, ~4 s) run one
// call, count 1031; the others counts {0, 1, 13, 1031}; in place or not by seed. 1031 is a prime above the rank count,
// so blocks are uneven; where buffers grow with the rank count (all-gather, reduce-scatter, all-to-all, gather,
// scatter) a count is cut to 13 or 1 to keep a call under 64 MiB. Dtypes and ops are seeded; delays are short. Each
// test takes a few seconds.
#include <gtest/gtest.h>

#include <chrono>
#include <iostream>
#include <random>

#include "dispatch/registry.h"
#include "tests/algo/harness.h"
#include "tests/algo/run_ranks.h"
#include "tests/common/dtype_values.h"
#include "tests/sim/sim_cases.h"

namespace myriad::sim {
namespace {

constexpr int kRanks = 1024;

const std::vector<std::string> kAlgos = {"allreduce.ring", "allreduce.tree",     "allreduce.halving_doubling",
                                         "allgather.ring", "reducescatter.ring", "alltoall.pairwise",
                                         "broadcast.ring", "broadcast.tree",     "reduce.tree",
                                         "gather.linear",  "scatter.linear",     "barrier.dissemination",
                                         "allreduce.hier", "allgather.hier",     "reducescatter.hier",
                                         "alltoall.hier"};

bool linearPerRank(const std::string& algo) {
  for (const char* a : {"allreduce.ring", "allgather.ring", "reducescatter.ring", "alltoall.pairwise", "alltoall.hier",
                        "reducescatter.hier"})
    if (algo == a) return true;
  return false;
}

std::vector<SimCombo> scaleCombos(const std::string& algo, CollKind kind, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<SimCombo> out;
  std::vector<size_t> counts{0, 1, 13, 1031};
  if (linearPerRank(algo)) counts = {1031};
  for (size_t count : counts) {
    SimCombo c;
    c.count = kind == CollKind::kBarrier ? 0 : count;
    c.type = static_cast<myrDataType_t>(rng() % test::kNumDataTypes);
    // Collectives whose buffers grow with the rank count keep a call under 64 MiB over all ranks.
    while (c.count > 1 && bytesPerRank(kind, c.count, c.type, kRanks) * kRanks > (size_t{64} << 20))
      c.count = c.count > 13 ? 13 : 1;
    c.op = reduces(kind) ? static_cast<myrRedOp_t>(rng() % test::kNumRedOps) : myrSum;
    c.inPlace = rng() % 2 == 0;
    c.root = static_cast<int>(rng() % kRanks), c.salt = rng(), c.nullUnused = rng() % 2;
    out.push_back(c);
  }
  return out;
}

class SimScale : public ::testing::TestWithParam<std::string> {};

TEST_P(SimScale, ThousandRanksMatchTheReference) {
  const Algorithm* algo = findAlgorithm(GetParam());
  ASSERT_NE(algo, nullptr) << GetParam() << " is not registered";
  uint64_t seed = test::testSeed();
  bool hier = GetParam().ends_with(".hier");
  // 16 KiB chunks: 1031 elements still fit one slice, and the rings' staging scratch is 64 KiB a rank, not 512.
  SimCase c{GetParam(), kRanks, hier ? "blocked_32x32" : "1host", {}, true, size_t{16} << 10};
  if (hier) c.hostOf = test::blockedHosts(std::vector<int>(32, 32));
  test::Pattern pattern(seed);
  std::string outcome;
  auto t0 = std::chrono::steady_clock::now();
  auto combos = scaleCombos(GetParam(), algo->kind(), caseSeed(seed, c));
  std::string err = runCombos(c, algo->kind(), combos, seed, pattern, &outcome);
  double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  EXPECT_EQ(err, "") << c.describe() << ", " << replayHint(seed);
  std::cout << "[ outcome  ] " << c.describe() << ": " << outcome << " in " << s << " s, " << replayHint(seed) << "\n";
}

std::string name(const ::testing::TestParamInfo<std::string>& info) {
  std::string n = info.param;
  for (char& ch : n)
    if (ch == '.') ch = '_';
  return n;
}

INSTANTIATE_TEST_SUITE_P(All, SimScale, ::testing::ValuesIn(kAlgos), name);

}  // namespace
}  // namespace myriad::sim
