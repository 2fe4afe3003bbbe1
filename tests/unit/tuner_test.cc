// The cost-model tuner: bytes per link class against what the schedules move, the predicted time of small
// hand-built schedules against the α-β formula, choices at shapes with a known answer, the calibration file,
// and the plugin seam.
#include "tuner/tuner.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <map>

#include "base/log.h"
#include "dispatch/registry.h"
#include "dispatch/select.h"
#include "plan/dtype.h"
#include "tuner/cost_model.h"
#include "tuner/tuner_file.h"

namespace myriad {
namespace {

CommView viewOf(const std::vector<int>& hostOf) {
  return CommView{0, HostLayout::fromHostOf(hostOf)};
}

std::vector<int> hostsOf(const std::vector<int>& sizes) {
  std::vector<int> out;
  for (size_t h = 0; h < sizes.size(); ++h) out.insert(out.end(), static_cast<size_t>(sizes[h]), static_cast<int>(h));
  return out;
}

CollArgs argsFor(CollKind kind, size_t bytes) {
  static char sendTag, recvTag;
  CollArgs a;
  a.kind = kind;
  a.count = bytes / 4;
  a.sendbuff = &sendTag;
  a.recvbuff = &recvTag;
  return a;
}

// Every registered algorithm (but the group's point-to-point), planned for every rank of a few layouts: the
// model's bytes per link class are the send bytes of the schedules, classified here by host.
TEST(CostModel, BytesPerLinkClassEqualWhatTheSchedulesSend) {
  const std::vector<std::vector<int>> layouts = {{4}, {4, 4}, {3, 2}, {2, 2, 1}};
  const TunerConstants k = TunerConstants::defaults();
  int checked = 0;
  for (const Algorithm* algo : allAlgorithms()) {
    if (algo->kind() == CollKind::kSendRecv) continue;
    for (const auto& sizes : layouts) {
      CommView view = viewOf(hostsOf(sizes));
      for (size_t bytes : {size_t{4096}, size_t{3} << 20}) {
        CollArgs a = argsFor(algo->kind(), bytes);
        if (!algo->supports(a, view).isOk()) continue;
        std::vector<Schedule> schedules;
        uint64_t intra = 0, inter = 0, received = 0;
        for (int r = 0; r < view.nranks(); ++r) {
          CommView rv = view;
          rv.rank = r;
          auto s = algo->plan(a, rv);
          ASSERT_TRUE(s.isOk()) << algo->name() << ": " << s.status().message();
          for (const auto& st : s.value().steps()) {
            if (st.kind == Schedule::Kind::kSend) (view.hostOf(r) == view.hostOf(st.peer) ? intra : inter) += st.n;
            if (st.kind == Schedule::Kind::kRecv || st.kind == Schedule::Kind::kRecvReduce) received += st.n;
          }
          schedules.push_back(std::move(s.value()));
        }
        Prediction p = predict(schedules, view, k);
        std::string what =
            std::string(algo->name()) + " on " + view.layout->describe() + ", " + std::to_string(bytes) + " B";
        EXPECT_EQ(p.bytes[static_cast<size_t>(LinkClass::kShm)], intra) << what;
        EXPECT_EQ(p.bytes[static_cast<size_t>(LinkClass::kTcp)], inter) << what;
        EXPECT_EQ(intra + inter, received) << what << ": sent and received bytes differ";
        EXPECT_GT(p.us, k.callUs) << what;
        // With shm turned off every byte goes over tcp; with rdma between hosts the inter-host bytes move there.
        CommView noShm = view;
        noShm.hostShm = false;
        EXPECT_EQ(predict(schedules, noShm, k).bytes[static_cast<size_t>(LinkClass::kTcp)], intra + inter) << what;
        CommView rdma = view;
        rdma.netRdma = true;
        EXPECT_EQ(predict(schedules, rdma, k).bytes[static_cast<size_t>(LinkClass::kRdma)], inter) << what;
        ++checked;
      }
    }
  }
  EXPECT_GT(checked, 50);
}

TunerConstants simple() {
  TunerConstants k;
  for (auto& l : k.links) l = {10, 1, 2};  // latency 10 µs, 1 GB/s (1000 B take 1 µs), 2 µs at each end
  k.link(LinkClass::kTcp) = {100, 0.5, 5};
  k.reduceGbps = 2;
  k.copyGbps = 4;
  k.callUs = 0;
  return k;
}

TEST(CostModel, OneMessageIsLatencyPlusAnOverheadAtEachEndPlusBytesTimesBeta) {
  CommView v = viewOf({0, 0});
  std::vector<Schedule> s(2);
  s[0].send(1, Schedule::sendBuf(), 100000);
  s[1].recv(0, Schedule::recvBuf(), 100000);
  EXPECT_DOUBLE_EQ(predict(s, v, simple()).us, 2 + 100 + 10 + 2);
  CommView two = viewOf({0, 1});  // across hosts: tcp
  EXPECT_DOUBLE_EQ(predict(s, two, simple()).us, 5 + 200 + 100 + 5);
}

TEST(CostModel, DependenciesChainAndReductionsCost) {
  // 0 -> 1, then 1 reduces the message into its buffer and forwards the result to 2.
  CommView v = viewOf({0, 0, 0});
  std::vector<Schedule> s(3);
  s[0].send(1, Schedule::sendBuf(), 8000);
  auto got = s[1].recv(0, Schedule::recvBuf(), 8000);
  auto red =
      s[1].reduce(Schedule::recvBuf(), Schedule::recvBuf(), Schedule::sendBuf(), 2000, myrFloat32, myrSum, {got});
  s[1].send(2, Schedule::recvBuf(), 8000, {red});
  s[2].recv(1, Schedule::recvBuf(), 8000);
  // (2 + 8 + 10 + 2) + 8000 B / 2 GB/s = 4 µs + (2 + 8 + 10 + 2)
  EXPECT_DOUBLE_EQ(predict(s, v, simple()).us, 22 + 4 + 22);
}

TEST(CostModel, ARanksSendsShareItsLink) {
  // Rank 0 sends 3 messages at once: they leave one after another (overhead and bytes each); the latency of
  // the last is not shared.
  CommView v = viewOf({0, 0, 0, 0});
  std::vector<Schedule> s(4);
  for (int p = 1; p < 4; ++p) {
    s[0].send(p, Schedule::sendBuf(), 10000);
    s[static_cast<size_t>(p)].recv(0, Schedule::recvBuf(), 10000);
  }
  EXPECT_DOUBLE_EQ(predict(s, v, simple()).us, 3 * (2 + 10) + 10 + 2);
}

TEST(CostModel, ReceivesMatchTheirSendsInOrder) {
  // Two messages 0 -> 1 of different sizes; 1 posts both receives at once.
  CommView v = viewOf({0, 0});
  std::vector<Schedule> s(2);
  s[0].send(1, Schedule::sendBuf(), 1000);
  s[0].send(1, Schedule::sendBuf(), 50000);
  s[1].recv(0, Schedule::recvBuf(), 1000);
  s[1].recv(0, Schedule::recvBuf(), 50000);
  Prediction p = predict(s, v, simple());
  // The second leaves after the first (2 + 1), arrives 10 later and is taken in after the first (2 + 1 + 2).
  EXPECT_DOUBLE_EQ(p.us, (2 + 1) + (2 + 50) + 10 + 2);
  EXPECT_EQ(p.messages[static_cast<size_t>(LinkClass::kShm)], 2u);
}

// Three pairs on three hosts, each a 1000 B message and a 20 µs reduction at the receiver: 35 µs apart. On
// one machine of 2 cores the six ranks' CPU time (3 x (2 + 2 + 20) µs) needs 36 µs of it; with cores to spare,
// or each host a machine of its own, the pairs run side by side.
TEST(CostModel, RanksThatOutnumberTheirMachinesCoresShareItsCpuTime) {
  std::vector<Schedule> s(6);
  for (int p = 0; p < 3; ++p) {
    s[static_cast<size_t>(2 * p)].send(2 * p + 1, Schedule::sendBuf(), 1000);
    auto got = s[static_cast<size_t>(2 * p + 1)].recv(2 * p, Schedule::recvBuf(), 1000);
    s[static_cast<size_t>(2 * p + 1)].reduce(Schedule::recvBuf(), Schedule::recvBuf(), Schedule::sendBuf(), 10000,
                                             myrFloat32, myrSum, {got});
  }
  auto base = HostLayout::fromHostOf({0, 0, 1, 1, 2, 2});
  auto on = [&](std::vector<std::string> machine, int cores) {
    return CommView{0, HostLayout::onMachines(*base, machine, std::vector<int>(6, cores))};
  };
  const std::vector<std::string> one(6, "m"), own = {"a", "a", "b", "b", "c", "c"};
  EXPECT_DOUBLE_EQ(predict(s, CommView{0, base}, simple()).us, 2 + 1 + 10 + 2 + 20);
  Prediction shared = predict(s, on(one, 2), simple());
  EXPECT_DOUBLE_EQ(shared.cpuBoundUs, 3 * (2 + 2 + 20) / 2.0);
  EXPECT_DOUBLE_EQ(shared.us, 36);
  EXPECT_DOUBLE_EQ(predict(s, on(one, 6), simple()).us, 35);  // a core per rank
  EXPECT_DOUBLE_EQ(predict(s, on(own, 1), simple()).us, 35);  // each machine's 24 µs on its core
  EXPECT_EQ(on(one, 2).layout->describeMachines(), " on 1 machine of 2 cores");
  EXPECT_EQ(on(own, 1).layout->describeMachines(), " on 3 machines of 1 core");
  // A machine is as large as the smallest share any of its ranks reports.
  auto mixed = HostLayout::onMachines(*base, one, {4, 4, 2, 4, 4, 4});
  EXPECT_EQ(mixed->coresOf(0), 2);
  EXPECT_EQ(mixed->machines(), 1);
}

std::string choiceAt(CollKind kind, size_t bytes, const std::vector<int>& sizes) {
  static const std::unique_ptr<Tuner> model = makeModelTuner(TunerConstants::defaults());
  CommView view = viewOf(hostsOf(sizes));
  CollArgs a = argsFor(kind, bytes);
  return model->choose(shapeOf(a, view), view, candidatesFor(a, view)).name;
}

// Shapes where the answer does not hang on the constants' exact values.
TEST(ModelTuner, ChoosesByRegime) {
  // Latency-bound: log2(n) rounds.
  EXPECT_EQ(choiceAt(CollKind::kAllReduce, 8, {8}), "allreduce.halving_doubling");
  EXPECT_EQ(choiceAt(CollKind::kAllReduce, 8, {16}), "allreduce.halving_doubling");
  EXPECT_EQ(choiceAt(CollKind::kBroadcast, 64, {8}), "broadcast.tree");
  // Bandwidth-bound without a power of two: the ring (halving-doubling's fold-in moves the whole vector).
  EXPECT_EQ(choiceAt(CollKind::kAllReduce, size_t{64} << 20, {6}), "allreduce.ring");
  EXPECT_EQ(choiceAt(CollKind::kBroadcast, size_t{16} << 20, {8}), "broadcast.ring");
  // Several hosts, medium and large sizes: the hierarchical forms cross the slow link less.
  EXPECT_EQ(choiceAt(CollKind::kAllReduce, size_t{1} << 20, {4, 4}), "allreduce.hier");
  EXPECT_EQ(choiceAt(CollKind::kAllReduce, size_t{1} << 20, {4, 4, 4}), "allreduce.hier");
  EXPECT_EQ(choiceAt(CollKind::kAllReduce, size_t{64} << 20, {4, 4}), "allreduce.hier");
  EXPECT_EQ(choiceAt(CollKind::kAllGather, size_t{1} << 20, {4, 4}), "allgather.hier");
  EXPECT_EQ(choiceAt(CollKind::kReduceScatter, size_t{1} << 20, {4, 4}), "reducescatter.hier");
  // Small all-to-all blocks on several hosts: one aggregated message per host pair.
  EXPECT_EQ(choiceAt(CollKind::kAllToAll, 1024, {4, 4}), "alltoall.hier");
}

// Beyond 64 ranks the call is priced on the first hosts (64 ranks at most), so that a choice at thousands
// of ranks costs what one at 64 does, and is still the same on every rank.
TEST(ModelTuner, LargeCommunicatorsArePricedOnTheirFirstHosts) {
  const std::unique_ptr<Tuner> model = makeModelTuner(TunerConstants::defaults());
  CommView big = viewOf(hostsOf(std::vector<int>(512, 8)));  // 4,096 ranks, 8 per host
  CommView small = viewOf(hostsOf(std::vector<int>(8, 8)));  // its first 64
  for (size_t bytes : {size_t{8}, size_t{1} << 20, size_t{64} << 20}) {
    CollArgs a = argsFor(CollKind::kAllReduce, bytes);
    Choice atScale = model->choose(shapeOf(a, big), big, candidatesFor(a, big));
    Choice priced = model->choose(shapeOf(a, small), small, candidatesFor(a, small));
    EXPECT_EQ(atScale.name, priced.name) << bytes;
    EXPECT_NE(atScale.by.find("priced at 64 ranks on hosts 8+8+8+8+8+8+8+8"), std::string::npos) << atScale.by;
    EXPECT_EQ(priced.by, "model");
  }
  CommView oneHost = viewOf(hostsOf({200}));
  CollArgs a = argsFor(CollKind::kAllGather, 4096);
  EXPECT_NE(
      model->choose(shapeOf(a, oneHost), oneHost, candidatesFor(a, oneHost)).by.find("priced at 64 ranks on hosts 64"),
      std::string::npos);
}

TEST(ModelTuner, TablesNameEveryCandidateAndAreCached) {
  const std::unique_ptr<Tuner> model = makeModelTuner(TunerConstants::defaults());
  CommView view = viewOf({0, 0, 0, 0, 1, 1, 1, 1});
  CollArgs a = argsFor(CollKind::kAllReduce, 65536);
  auto cands = candidatesFor(a, view);
  Choice c = model->choose(shapeOf(a, view), view, cands);
  ASSERT_EQ(c.costs.size(), cands.size());
  for (size_t i = 0; i < cands.size(); ++i) {
    EXPECT_EQ(c.costs[i].name, cands[i].name);
    EXPECT_GT(c.costs[i].us, 0) << c.costs[i].name;
  }
  std::string text = explainChoice(shapeOf(a, view), view.layout->describe(), c);
  EXPECT_NE(text.find(c.name + " (model)"), std::string::npos) << text;
  EXPECT_NE(text.find("<- chosen"), std::string::npos) << text;
  // The second call of the shape comes from the cache: planners that fail now do not change the answer.
  std::vector<Candidate> broken = cands;
  for (auto& b : broken)
    b.plan = [](const CollArgs&, const CommView&) -> Result<Schedule> { return internalError("no"); };
  EXPECT_EQ(model->choose(shapeOf(a, view), view, broken).name, c.name);
}

// MYRIAD_DEBUG_SUBSYS=TUNE: each distinct shape's table once. In a fresh process (the logger is configured
// once per process), writing to a file that the test then reads.
TEST(ModelTunerDeathTest, ExplainsEachShapeOnceUnderTune) {
#ifdef GTEST_FLAG_SET
  GTEST_FLAG_SET(death_test_style, "threadsafe");
#else
  ::testing::FLAGS_gtest_death_test_style = "threadsafe";
#endif
  const std::string path = testing::TempDir() + "myriad_tuner_explain.log";
  std::remove(path.c_str());
  EXPECT_EXIT(
      {
        Config c;
        c.debugLevel = "INFO";
        c.debugSubsys = "TUNE";
        c.debugFile = path;
        configureLogging(c);
        const std::unique_ptr<Tuner> model = makeModelTuner(TunerConstants::defaults());
        CommView view = viewOf({0, 0, 1, 1});
        for (size_t bytes : {size_t{8}, size_t{65536}, size_t{8}, size_t{65536}, size_t{8}}) {
          CollArgs a = argsFor(CollKind::kAllReduce, bytes);
          model->choose(shapeOf(a, view), view, candidatesFor(a, view));
        }
        std::exit(0);
      },
      testing::ExitedWithCode(0), "");
  std::ifstream f(path);
  std::string text((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  auto count = [&](const std::string& what) {
    size_t n = 0;
    for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
    return n;
  };
  EXPECT_EQ(count("[TUNE] tuner: allreduce 8 B float, 4 ranks on hosts 2+2: "), 1u) << text;
  EXPECT_EQ(count("[TUNE] tuner: allreduce 65536 B float, 4 ranks on hosts 2+2: "), 1u) << text;
  EXPECT_EQ(count("<- chosen"), 2u) << text;
  EXPECT_EQ(count("allreduce.ring "), 2u) << text;
  std::remove(path.c_str());
}

// All-to-allv: no size every rank knows, so the worst ratio to the best over block sizes decides (minimax
// regret); the two-stage hierarchical plan pays its count exchange on top, and at 1 MiB blocks its staging
// copies. On 4+4 that is the hierarchical plan, as the sweep of docs/design/tuning.md measured for all-to-all
// on 8 ranks as 4+4 (pairwise up to 3x slower at small blocks, hierarchical at most 1.3x at large ones); on one
// host, where it aggregates nothing, pairwise.
TEST(ModelTuner, AllToAllvChoosesWithoutASize) {
  const std::unique_ptr<Tuner> model = makeModelTuner(TunerConstants::defaults());
  for (const auto& sizes : std::vector<std::vector<int>>{{2, 2}, {4, 4}, {3, 3, 2}, {4}}) {
    CommView view = viewOf(hostsOf(sizes));
    CollArgs a = argsFor(CollKind::kAllToAll, 0);
    size_t n = static_cast<size_t>(view.nranks());
    for (size_t p = 0; p < n; ++p) {
      a.sendCounts.push_back(p + 1);
      a.recvCounts.push_back(p + 1);
      a.sendDispls.push_back(p * (p + 1) / 2);
      a.recvDispls.push_back(p * (p + 1) / 2);
    }
    CallShape shape = shapeOf(a, view);
    ASSERT_TRUE(shape.perPeerCounts);
    Choice c = model->choose(shape, view, candidatesFor(a, view));
    std::string text = explainChoice(shape, view.layout->describe(), c);
    double best = 1e300, chosen = 0;
    for (const auto& cc : c.costs) {
      EXPECT_GE(cc.us, 1.0) << text;  // ratios to the best
      best = std::min(best, cc.us);
      if (cc.name == c.name) chosen = cc.us;
    }
    EXPECT_EQ(chosen, best) << text;
    EXPECT_LT(best, 1.5) << text;
    if (sizes.size() == 1) {
      EXPECT_EQ(c.name, "alltoall.pairwise") << text;
    }
  }
  // Where a message between hosts costs far more than one inside a host, the node-aggregated exchange saves
  // enough on small blocks that minimax regret takes it, count exchange and all.
  TunerConstants dear = TunerConstants::defaults();
  dear.link(LinkClass::kTcp).overheadUs = 60;
  const std::unique_ptr<Tuner> slowNet = makeModelTuner(dear);
  CommView view = viewOf(hostsOf({4, 4}));
  CollArgs a = argsFor(CollKind::kAllToAll, 0);
  for (size_t p = 0; p < 8; ++p) {
    a.sendCounts.push_back(p + 1);
    a.recvCounts.push_back(p + 1);
    a.sendDispls.push_back(p * (p + 1) / 2);
    a.recvDispls.push_back(p * (p + 1) / 2);
  }
  CallShape shape = shapeOf(a, view);
  Choice c = slowNet->choose(shape, view, candidatesFor(a, view));
  EXPECT_EQ(c.name, "alltoall.hier") << explainChoice(shape, view.layout->describe(), c);
}

TEST(TunerFile, RoundTripsTheDefaults) {
  TunerConstants k = TunerConstants::defaults();
  k.link(LinkClass::kTcp) = {33.5, 2.25, 4.5};
  k.reduceGbps = 7;
  auto back = parseTunerFile(writeTunerFile(k), "x", TunerConstants{});
  ASSERT_TRUE(back.isOk()) << back.status().message();
  for (int c = 0; c < kLinkClasses; ++c) {
    EXPECT_DOUBLE_EQ(back.value().links[static_cast<size_t>(c)].alphaUs, k.links[static_cast<size_t>(c)].alphaUs);
    EXPECT_DOUBLE_EQ(back.value().links[static_cast<size_t>(c)].gbps, k.links[static_cast<size_t>(c)].gbps);
    EXPECT_DOUBLE_EQ(back.value().links[static_cast<size_t>(c)].overheadUs, k.links[static_cast<size_t>(c)].overheadUs);
  }
  EXPECT_DOUBLE_EQ(back.value().reduceGbps, 7);
  EXPECT_DOUBLE_EQ(back.value().copyGbps, k.copyGbps);
  EXPECT_DOUBLE_EQ(back.value().callUs, k.callUs);
}

TEST(TunerFile, KeysLeftOutKeepTheirDefaults) {
  auto k = parseTunerFile("# calibrated\n\nshm.alpha_us 2.5   # measured\n", "f");
  ASSERT_TRUE(k.isOk()) << k.status().message();
  EXPECT_DOUBLE_EQ(k.value().link(LinkClass::kShm).alphaUs, 2.5);
  EXPECT_DOUBLE_EQ(k.value().link(LinkClass::kTcp).alphaUs, TunerConstants::defaults().link(LinkClass::kTcp).alphaUs);
}

TEST(TunerFile, ErrorsNameTheFileAndLine) {
  struct Case {
    const char* text;
    const char* expected;
  };
  const Case cases[] = {
      {"shm.gbps 2\nshm.speed 3\n", "calib.txt:2: unknown key 'shm.speed'"},
      {"tcp.alpha_us\n", "calib.txt:1: 'tcp.alpha_us' has no value"},
      {"\n\ntcp.gbps fast\n", "calib.txt:3: 'tcp.gbps' needs a positive number, not 'fast'"},
      {"tcp.gbps 0\n", "calib.txt:1: 'tcp.gbps' needs a positive number"},
      {"call_us -1\n", "calib.txt:1: 'call_us' needs a non-negative number"},
      {"shm.overhead_us -0.5\n", "calib.txt:1: 'shm.overhead_us' needs a non-negative number"},
      {"reduce.gbps 1 2\n", "calib.txt:1: more than one value after 'reduce.gbps'"},
      {"copy.gbps 1\ncopy.gbps 2\n", "calib.txt:2: 'copy.gbps' is given a second time"},
  };
  for (const Case& c : cases) {
    auto k = parseTunerFile(c.text, "calib.txt");
    ASSERT_FALSE(k.isOk()) << c.text;
    EXPECT_NE(k.status().message().find(c.expected), std::string::npos) << k.status().message();
  }
  auto missing = loadTunerFile("/nonexistent/tuner.txt");
  ASSERT_FALSE(missing.isOk());
  EXPECT_NE(missing.status().message().find("MYRIAD_TUNER_FILE /nonexistent/tuner.txt: cannot be read"),
            std::string::npos)
      << missing.status().message();
  auto viaSelect = tunerFor("/nonexistent/tuner.txt", "");
  EXPECT_FALSE(viaSelect.isOk());
}

TEST(TunerFile, ConstantsChangeTheChoice) {
  // With tcp made as fast as shm, nothing is gained by keeping traffic inside a host.
  std::string path = testing::TempDir() + "myriad_tuner_fast_tcp.txt";
  {
    std::ofstream f(path);
    const TunerConstants defaults = TunerConstants::defaults();
    const LinkCost& shm = defaults.link(LinkClass::kShm);
    f << "tcp.alpha_us " << shm.alphaUs << "\ntcp.overhead_us " << shm.overheadUs << "\ntcp.gbps " << shm.gbps << "\n";
  }
  auto tuner = tunerFor(path, "");
  ASSERT_TRUE(tuner.isOk()) << tuner.status().message();
  CommView view = viewOf({0, 0, 0, 0, 1, 1, 1, 1});
  CollArgs a = argsFor(CollKind::kAllReduce, size_t{64} << 20);
  Choice fast = tuner.value()->choose(shapeOf(a, view), view, candidatesFor(a, view));
  EXPECT_EQ(fast.name, choiceAt(CollKind::kAllReduce, size_t{64} << 20, {8})) << "the one-host choice";
  EXPECT_EQ(choiceAt(CollKind::kAllReduce, size_t{64} << 20, {4, 4}), "allreduce.hier");
  std::remove(path.c_str());
}

#ifdef MYRIAD_TEST_TUNER_PLUGIN_DIR
std::string pluginPath(const char* name) {
  return std::string(MYRIAD_TEST_TUNER_PLUGIN_DIR) + "/" + name;
}

TEST(TunerPlugin, ItsChoiceTakesEffect) {
  // The test plugin picks allreduce.tree whenever it is a candidate, and defers otherwise.
  auto t = makePluginTuner(pluginPath("libmyriad_test_tuner_plugin.so"), makeModelTuner(TunerConstants::defaults()));
  ASSERT_TRUE(t.isOk()) << t.status().message();
  CommView view = viewOf({0, 0, 0, 0});
  CollArgs a = argsFor(CollKind::kAllReduce, 8);
  ASSERT_EQ(choiceAt(CollKind::kAllReduce, 8, {4}), "allreduce.halving_doubling");
  Choice c = t.value()->choose(shapeOf(a, view), view, candidatesFor(a, view));
  EXPECT_EQ(c.name, "allreduce.tree");
  EXPECT_EQ(c.by, "plugin test-tree");
  auto selected = selectAlgorithm(a, view, "", *t.value());
  ASSERT_TRUE(selected.isOk());
  EXPECT_STREQ(selected.value()->name(), "allreduce.tree");
  // MYRIAD_ALGO still comes first.
  auto forced = selectAlgorithm(a, view, "allreduce.ring", *t.value());
  ASSERT_TRUE(forced.isOk());
  EXPECT_STREQ(forced.value()->name(), "allreduce.ring");
  // -1: the model's choice.
  CollArgs b = argsFor(CollKind::kBroadcast, 8);
  EXPECT_EQ(t.value()->choose(shapeOf(b, view), view, candidatesFor(b, view)).name,
            choiceAt(CollKind::kBroadcast, 8, {4}));
  // Through the settings, as a communicator finds it.
  auto viaConfig = tunerFor("", pluginPath("libmyriad_test_tuner_plugin.so"));
  ASSERT_TRUE(viaConfig.isOk());
  EXPECT_EQ(viaConfig.value()->choose(shapeOf(a, view), view, candidatesFor(a, view)).name, "allreduce.tree");
}

TEST(TunerPlugin, ABadLibraryIsAnErrorThatSaysWhy) {
  auto model = [] { return makeModelTuner(TunerConstants::defaults()); };
  auto missing = makePluginTuner(pluginPath("libnot_there.so"), model());
  ASSERT_FALSE(missing.isOk());
  EXPECT_NE(missing.status().message().find("libnot_there.so: cannot be loaded"), std::string::npos)
      << missing.status().message();
  auto noSymbol = makePluginTuner(pluginPath("libmyriad_test_tuner_nosym.so"), model());
  ASSERT_FALSE(noSymbol.isOk());
  EXPECT_NE(noSymbol.status().message().find("has no symbol myriadTunerPlugin_v1"), std::string::npos)
      << noSymbol.status().message();
  auto version = makePluginTuner(pluginPath("libmyriad_test_tuner_v2.so"), model());
  ASSERT_FALSE(version.isOk());
  EXPECT_NE(version.status().message().find("is version 2, this Myriad reads version 1"), std::string::npos)
      << version.status().message();
  // A tuner for the settings still comes back: the model, with a warning.
  auto fallback = tunerFor("", pluginPath("libmyriad_test_tuner_v2.so"));
  ASSERT_TRUE(fallback.isOk());
  EXPECT_STREQ(fallback.value()->name(), "model");
}

TEST(TunerPlugin, AnIndexThatIsNoCandidateKeepsTheModelsChoice) {
  auto t = makePluginTuner(pluginPath("libmyriad_test_tuner_bad_index.so"), makeModelTuner(TunerConstants::defaults()));
  ASSERT_TRUE(t.isOk()) << t.status().message();
  CommView view = viewOf({0, 0, 0, 0});
  CollArgs a = argsFor(CollKind::kAllReduce, 8);
  Choice c = t.value()->choose(shapeOf(a, view), view, candidatesFor(a, view));
  EXPECT_EQ(c.name, choiceAt(CollKind::kAllReduce, 8, {4}));
  EXPECT_EQ(c.by, "model");
}
#endif

}  // namespace
}  // namespace myriad
