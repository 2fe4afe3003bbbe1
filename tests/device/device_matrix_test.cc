// The device tier: every registered algorithm (and the tuner's choice, per collective) lowered to stream
// operations by the device executor and run on a host-backed device, on one host with 1-8 ranks and on
// multi-host layouts (the lowering does not care where a peer is; the channels here are linked in-process),
// over seeded combinations of count class, dtype, op and in/out of place, every rank's result checked
// against the reference (tests/sim/sim_call.h). Each case draws its inbox shapes and stream order from its
// seed; MYRIAD_TEST_SEED=<seed> replays a failure. Plans the lowering refuses (a second stage planned from
// exchanged data) must be refused with the documented reason, never run wrongly. With MYRIAD_TEST_SHORT=1
// (the sanitizer builds) fewer single-host rank counts, and no large count in 64 B or 1 KiB chunks.
#include <gtest/gtest.h>

#include <iostream>
#include <vector>

#include "dispatch/registry.h"
#include "exec/device_executor.h"
#include "tests/algo/harness.h"
#include "tests/device/device_runner.h"
#include "tests/sim/sim_cases.h"
#include "tests/sim/sim_combos.h"

namespace myriad::devtest {
namespace {

using sim::kTuner;

using Param = sim::MatrixParam;

constexpr size_t kShortChunkedCount = 1009;

std::string paramName(const ::testing::TestParamInfo<Param>& info) {
  return sim::matrixParamName(info.param);
}

sim::RunnerFactory deviceRunners() {
  return [](const sim::SimCase& c, uint64_t seed) -> std::unique_ptr<sim::CallRunner> {
    return std::make_unique<DeviceRunner>(c.nranks, seed);
  };
}

class DeviceMatrix : public ::testing::TestWithParam<Param> {};

TEST_P(DeviceMatrix, EveryCaseMatchesTheReference) {
  const Param& p = GetParam();
  uint64_t seed = test::testSeed();
  test::Pattern pattern(seed);
  size_t cases = 0, calls = 0;
  for (const sim::SimCase& c : sim::simCasesFor(p.algo, p.kind)) {
    if (c.nranks > 9) continue;  // 16 and 33 ranks: the sim tier; the lowering is per rank and peer
    // The sanitizer builds (test::shortRun()): 2, 3 and 5 ranks on one host and the multi-host layouts.
    if (test::shortRun() && c.singleHost() && c.nranks != 2 && c.nranks != 3 && c.nranks != 5) continue;
    auto combos = sim::sampleCombos(p.kind, c.nranks, sim::caseSeed(seed, c), c.chunkBytes ? 2 : 1);
    // And there a small-chunk case leaves out its largest counts: 65,537 elements in 64 B chunks queue over
    // 100,000 operations per lane (70 of a tuner test's 87 s under TSan); a count of 1,009 still pipelines
    // over 100 chunks.
    if (test::shortRun() && c.chunkBytes)
      std::erase_if(combos, [](const sim::SimCombo& x) { return x.count > kShortChunkedCount; });
    std::string outcome;
    std::string err = sim::runCombos(c, p.kind, combos, seed, pattern, &outcome, deviceRunners());
    EXPECT_EQ(err, "") << c.describe() << ", " << sim::replayHint(seed);
    if (err.empty()) std::cout << "[ outcome  ] " << c.describe() << ": " << outcome << "\n";
    ++cases;
    calls += combos.size();
  }
  std::cout << "[ outcome  ] " << paramName({p, 0}) << ": " << cases << " cases, " << calls << " calls on the device, "
            << sim::replayHint(seed) << "\n";
}

INSTANTIATE_TEST_SUITE_P(All, DeviceMatrix, ::testing::ValuesIn(sim::matrixParams()), paramName);

}  // namespace
}  // namespace myriad::devtest
