// Graph capture on the device tier: every registered algorithm's call lowered once under (emulated) CUDA
// graph capture and replayed three times on the same buffers, each replay from the buffers' initial state
// and checked against the reference, with an uncaptured call of the communicator between the replays. This
// holds only because each call leaves its channels' flags at zero and waits for constants (core/
// device_comm.h); a lowering that carried state from call to call deadlocks or fails the check here.
#include <gtest/gtest.h>

#include "algorithms/algorithm.h"
#include "dispatch/registry.h"
#include "tests/algo/harness.h"
#include "tests/device/device_runner.h"
#include "tests/sim/sim_call.h"
#include "tests/sim/sim_cases.h"

namespace myriad::devtest {
namespace {

class DeviceGraph : public ::testing::TestWithParam<const Algorithm*> {};

// Plans call `c` of every rank with the algorithm; "" or why not.
std::string plan(const Algorithm* algo, sim::SimCall& c, const std::vector<CommView>& views,
                 std::vector<sim::RankCall>* out) {
  out->clear();
  for (size_t r = 0; r < views.size(); ++r) {
    Status ok = algo->supports(c.args()[r], views[r]);
    if (!ok.isOk()) return std::string(algo->name()) + " refuses: " + ok.message();
    auto p = algo->plan(c.args()[r], views[r]);
    if (!p.isOk()) return p.status().message();
    out->push_back({p.take(), c.args()[r]});
  }
  return "";
}

std::string checkAll(sim::SimCall& c, int n, const std::string& what) {
  for (int r = 0; r < n; ++r)
    if (std::string e = c.check(r); !e.empty()) return what + ": rank " + std::to_string(r) + ": " + e;
  return "";
}

TEST_P(DeviceGraph, CapturedOnceReplayedThrice) {
  const Algorithm* algo = GetParam();
  const uint64_t seed = test::testSeed();
  test::Pattern pattern(seed);
  // Three ranks on one host; hierarchical algorithms on two hosts of two.
  const bool hier = std::string(algo->name()).find(".hier") != std::string::npos;
  auto layout = hier ? HostLayout::fromHostOf({0, 0, 1, 1}) : HostLayout::single(3);
  const int n = hier ? 4 : 3;
  std::vector<CommView> views;
  for (int r = 0; r < n; ++r) views.push_back(CommView{r, layout});
  sim::SimCombo combo{4099, myrFloat32, myrSum, false, 0, seed, false};
  DeviceRunner runner(n, seed);
  std::vector<sim::RankCall> calls;

  sim::SimCall warm(algo->kind(), combo, n, pattern, 0);  // opens the channels, sizes the scratch
  ASSERT_EQ(plan(algo, warm, views, &calls), "");
  ASSERT_TRUE(runner.run(calls).isOk());
  ASSERT_EQ(checkAll(warm, n, "uncaptured warm-up"), "");

  sim::SimCall graph(algo->kind(), combo, n, pattern, 1000);
  auto initial = graph.image();
  ASSERT_EQ(plan(algo, graph, views, &calls), "");
  Status captured = runner.capture(calls);
  ASSERT_TRUE(captured.isOk()) << captured.toString();
  for (int replay = 0; replay < 3; ++replay) {
    graph.restore(initial);
    Status s = runner.replay();
    ASSERT_TRUE(s.isOk()) << "replay " << replay << ": " << s.toString() << ", " << sim::replayHint(seed);
    ASSERT_EQ(checkAll(graph, n, "replay " + std::to_string(replay)), "") << sim::replayHint(seed);
    if (replay == 1) {  // an uncaptured call between replays
      sim::SimCall between(algo->kind(), combo, n, pattern, 2000);
      ASSERT_EQ(plan(algo, between, views, &calls), "");
      ASSERT_TRUE(runner.run(calls).isOk());
      ASSERT_EQ(checkAll(between, n, "uncaptured call between replays"), "");
    }
  }
}

// A capture before the channels exist is refused with the advice, enqueues nothing, and the communicator
// goes on: the uncaptured call that follows runs and is right.
TEST(DeviceGraphRefusal, CaptureBeforeChannelsExistIsRefused) {
  const Algorithm* algo = findAlgorithm("allreduce.ring");
  ASSERT_NE(algo, nullptr);
  const uint64_t seed = test::testSeed();
  test::Pattern pattern(seed);
  const int n = 3;
  auto layout = HostLayout::single(n);
  std::vector<CommView> views;
  for (int r = 0; r < n; ++r) views.push_back(CommView{r, layout});
  sim::SimCombo combo{1009, myrFloat32, myrSum, false, 0, seed, false};
  DeviceRunner runner(n, seed);
  std::vector<sim::RankCall> calls;
  sim::SimCall first(algo->kind(), combo, n, pattern, 0);
  ASSERT_EQ(plan(algo, first, views, &calls), "");
  Status refused = runner.capture(calls);
  EXPECT_EQ(refused.code(), Code::kInvalidUsage) << refused.toString();
  EXPECT_NE(refused.message().find("make one uncaptured call first"), std::string::npos) << refused.toString();
  sim::SimCall then(algo->kind(), combo, n, pattern, 100);
  ASSERT_EQ(plan(algo, then, views, &calls), "");
  Status ran = runner.run(calls);
  ASSERT_TRUE(ran.isOk()) << ran.toString();
  EXPECT_EQ(checkAll(then, n, "the call after the refusal"), "");
}

std::vector<const Algorithm*> algorithms() {
  std::vector<const Algorithm*> out;
  for (const Algorithm* a : allAlgorithms())
    if (a->kind() != CollKind::kSendRecv) out.push_back(a);
  return out;
}

INSTANTIATE_TEST_SUITE_P(All, DeviceGraph, ::testing::ValuesIn(algorithms()),
                         [](const ::testing::TestParamInfo<const Algorithm*>& info) {
                           std::string name = info.param->name();
                           for (char& ch : name)
                             if (ch == '.') ch = '_';
                           return name;
                         });

}  // namespace
}  // namespace myriad::devtest
