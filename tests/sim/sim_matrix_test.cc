// The sim matrix: every registered algorithm (and the tuner's choice, per collective) on one host with 1-33
// ranks and on multi-host layouts, over the combinations of sim_combos.h, each call stepped by the
// deterministic executor under the case's seeded delays, rendezvous/buffered sends and combining receives,
// every rank's result checked against the reference (sim_call.h). A failure names the case, the call, the
// rank and the seed; MYRIAD_TEST_SEED=<seed> replays it exactly. Refused calls are counted and printed.
#include <gtest/gtest.h>

#include <iostream>

#include "dispatch/registry.h"
#include "tests/algo/harness.h"
#include "tests/sim/sim_cases.h"
#include "tests/sim/sim_combos.h"

namespace myriad::sim {
namespace {

using Param = MatrixParam;

std::string paramName(const ::testing::TestParamInfo<Param>& info) {
  return matrixParamName(info.param);
}

class SimMatrix : public ::testing::TestWithParam<Param> {};

TEST_P(SimMatrix, EveryCaseMatchesTheReference) {
  const Param& p = GetParam();
  uint64_t seed = test::testSeed();
  test::Pattern pattern(seed);
  auto cases = simCasesFor(p.algo, p.kind);
  auto dealt = dealCombos(p.kind, simRanks(), seed ^ std::hash<std::string>{}(p.algo + collName(p.kind)));
  size_t single = 0, calls = 0;
  for (const SimCase& c : cases) {
    const auto& combos = c.singleHost() && !c.chunkBytes
                             ? dealt[single++]
                             : sampleCombos(p.kind, c.nranks, caseSeed(seed, c), c.chunkBytes ? 3 : 1);
    std::string outcome;
    std::string err = runCombos(c, p.kind, combos, seed, pattern, &outcome);
    EXPECT_EQ(err, "") << c.describe() << ", " << replayHint(seed);
    if (err.empty()) std::cout << "[ outcome  ] " << c.describe() << ": " << outcome << "\n";
    calls += combos.size();
  }
  std::cout << "[ outcome  ] " << paramName({p, 0}) << ": " << cases.size() << " cases, " << calls << " calls, "
            << replayHint(seed) << "\n";
}

INSTANTIATE_TEST_SUITE_P(All, SimMatrix, ::testing::ValuesIn(matrixParams()), paramName);

}  // namespace
}  // namespace myriad::sim
