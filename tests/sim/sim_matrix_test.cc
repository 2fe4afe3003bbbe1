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

struct Param {
  std::string algo;  // registry name or kTuner
  CollKind kind;
};

std::vector<Param> params() {
  std::vector<Param> out;
  for (const Algorithm* a : allAlgorithms())
    if (a->kind() != CollKind::kSendRecv) out.push_back({a->name(), a->kind()});  // groups: sim_p2p_test.cc
  for (CollKind k :
       {CollKind::kAllReduce, CollKind::kBroadcast, CollKind::kReduce, CollKind::kAllGather, CollKind::kReduceScatter,
        CollKind::kAllToAll, CollKind::kGather, CollKind::kScatter, CollKind::kBarrier})
    out.push_back({kTuner, k});
  return out;
}

std::string paramName(const ::testing::TestParamInfo<Param>& info) {
  std::string name = info.param.algo == kTuner ? std::string("tuner_") + collName(info.param.kind) : info.param.algo;
  for (char& ch : name)
    if (ch == '.') ch = '_';
  return name;
}

// Runs `combos` on one case; "" or the first failure.
std::string runCase(const SimCase& c, CollKind kind, const std::vector<SimCombo>& combos, uint64_t seed,
                    const test::Pattern& pattern, std::string* outcome) {
  CaseRunner runner(c, caseSeed(seed, c));
  int n = c.nranks;
  for (size_t i = 0; i < combos.size(); ++i) {
    SimCall call(kind, combos[i], n, pattern, static_cast<int>(i) * (n * n + n));
    RunStats stats;
    std::string err = runner.run(call.args(), &stats);
    for (int r = 0; r < n && err.empty(); ++r) {
      err = call.check(r);
      if (!err.empty()) err = "rank " + std::to_string(r) + ": " + err;
    }
    // Nobody leaves a barrier before the last rank has entered it.
    if (err.empty() && kind == CollKind::kBarrier && n > 1) {
      uint64_t lastStart = *std::max_element(stats.started.begin(), stats.started.end());
      for (int r = 0; r < n && err.empty(); ++r)
        if (stats.finished[static_cast<size_t>(r)] < lastStart)
          err = "rank " + std::to_string(r) + " left the barrier in round " +
                std::to_string(stats.finished[static_cast<size_t>(r)]) + ", before the last rank entered (round " +
                std::to_string(lastStart) + ")";
    }
    if (!err.empty()) return "call " + std::to_string(i) + " (" + describe(combos[i], kind) + "): " + err;
  }
  if (c.mustRun && runner.refused())
    return c.algo + " must run every call here but refused " + std::to_string(runner.refused()) + ": " +
           runner.refusal();
  *outcome = std::to_string(combos.size()) + " calls: " + runner.outcome();
  return "";
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
    const auto& combos =
        c.singleHost() && !c.chunkBytes ? dealt[single++] : sampleCombos(p.kind, c.nranks, caseSeed(seed, c));
    std::string outcome;
    std::string err = runCase(c, p.kind, combos, seed, pattern, &outcome);
    EXPECT_EQ(err, "") << c.describe() << ", " << replayHint(seed);
    if (err.empty()) std::cout << "[ outcome  ] " << c.describe() << ": " << outcome << "\n";
    calls += combos.size();
  }
  std::cout << "[ outcome  ] " << paramName({p, 0}) << ": " << cases.size() << " cases, " << calls << " calls, "
            << replayHint(seed) << "\n";
}

INSTANTIATE_TEST_SUITE_P(All, SimMatrix, ::testing::ValuesIn(params()), paramName);

}  // namespace
}  // namespace myriad::sim
