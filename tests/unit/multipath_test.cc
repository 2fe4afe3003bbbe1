// Unit tests of the transport-independent multipath parts: chunk plans and reassembly, source-port choice,
// pull scheduling (caps, static split, end-game, lane loss) and the control loop's decisions from scripted
// per-path measurements, and the path keeper's rounds and stand-down verdict.
#include <gtest/gtest.h>

#include <deque>
#include <set>

#include "transports/multipath/byte_pool.h"
#include "transports/multipath/chunk.h"
#include "transports/multipath/control.h"
#include "transports/multipath/path_keeper.h"
#include "transports/multipath/path_set.h"
#include "transports/multipath/scheduler.h"
#include "transports/multipath/telemetry.h"

namespace myriad::mp {
namespace {

TEST(MultipathChunks, SmallMessageIsOneChunk) {
  auto p = planChunks(1000, 4096, 1024);
  ASSERT_EQ(p.size(), 1u);
  EXPECT_EQ(p[0].length, 1000u);
  EXPECT_EQ(planChunks(0, 4096, 1024).size(), 1u);
}

TEST(MultipathChunks, LargeMessageTilesExactly) {
  for (uint64_t total : {4097ull, 8192ull, 10000ull, 1ull << 20}) {
    auto p = planChunks(total, 4096, 1000);
    uint64_t next = 0;
    for (size_t i = 0; i < p.size(); ++i) {
      EXPECT_EQ(p[i].index, i);
      EXPECT_EQ(p[i].offset, next);
      EXPECT_GT(p[i].length, 0u);
      EXPECT_LE(p[i].length, 1000u);
      next += p[i].length;
    }
    EXPECT_EQ(next, total);
  }
}

TEST(MultipathChunks, ReassemblyCountsDistinctChunksInAnyOrder) {
  auto plan = planChunks(10000, 4096, 1000);
  Reassembly r(10000, static_cast<uint32_t>(plan.size()));
  std::vector<uint8_t> dst(10000, 0), src(10000);
  for (size_t i = 0; i < src.size(); ++i) src[i] = static_cast<uint8_t>(i * 7 + 3);
  std::vector<size_t> order = {9, 0, 5, 5, 3, 1, 2, 9, 8, 4, 6, 7};  // with duplicates
  for (size_t k : order) {
    const ChunkSpan& c = plan[k];
    FrameHeader h;
    h.index = c.index, h.chunks = r.chunks(), h.offset = c.offset, h.length = c.length, h.total = 10000;
    ASSERT_TRUE(chunkFits(h, 10000, r));
    bool first = !r.seen(c.index);
    EXPECT_EQ(r.arrive(c.index), first);
    if (first) std::copy(src.begin() + c.offset, src.begin() + c.offset + c.length, dst.begin() + c.offset);
    EXPECT_EQ(r.complete(), k == 7);
  }
  EXPECT_TRUE(r.complete());
  EXPECT_EQ(dst, src);
}

TEST(MultipathChunks, MalformedHeadersAreRejected) {
  Reassembly r(10000, 10);
  FrameHeader h;
  h.total = 10000, h.chunks = 10, h.index = 10, h.offset = 0, h.length = 10;
  EXPECT_FALSE(chunkFits(h, 10000, r));  // index out of range
  h.index = 2, h.offset = 9995;
  EXPECT_FALSE(chunkFits(h, 10000, r));  // runs past the end
  h.offset = 0, h.total = 9999;
  EXPECT_FALSE(chunkFits(h, 10000, r));  // another size than the receive
  h.total = 10000, h.chunks = 9;
  EXPECT_FALSE(chunkFits(h, 10000, r));  // another chunk count
}

TEST(MultipathPorts, PresetFirstThenRandomDistinctNotTabu) {
  auto range = parsePortRange("40001,40002");
  ASSERT_TRUE(range.isOk());
  PathSet ps(4, 1, range.value(), 7);
  EXPECT_EQ(ps.path(ps.addPath(true)).port, 40001);
  EXPECT_EQ(ps.path(ps.addPath(true)).port, 40002);
  for (int i = 0; i < 3; ++i) ps.path(ps.addPath(true)).state = PathState::kActive;
  std::set<uint16_t> used;
  for (int i = 0; i < ps.size(); ++i) used.insert(ps.path(i).port);
  EXPECT_EQ(used.size(), 5u);
  for (int i = 0; i < 2000; ++i) {
    uint16_t p = ps.choosePort();
    EXPECT_GE(p, 32768);
    EXPECT_LE(p, 60999);
    EXPECT_FALSE(ps.inUse(p));
  }
}

TEST(MultipathPorts, TabuListIsShortAndRespected) {
  auto range = parsePortRange("50000-50020");
  ASSERT_TRUE(range.isOk());
  PathSet ps(1, 0, range.value(), 3);
  for (uint16_t p = 50000; p < 50008; ++p) ps.tabu(p);
  for (int i = 0; i < 500; ++i) {
    uint16_t p = ps.choosePort();
    EXPECT_GE(p, 50008);
    EXPECT_LE(p, 50020);
  }
  ps.tabu(50008);  // pushes 50000 off the list
  EXPECT_FALSE(ps.isTabu(50000));
  EXPECT_TRUE(ps.isTabu(50008));
  EXPECT_FALSE(parsePortRange("5-4").isOk());
  EXPECT_FALSE(parsePortRange("40000,x").isOk());
}

Clock::time_point t0() {
  static auto t = Clock::now();
  return t;
}
Clock::time_point at(double ms) {
  return t0() + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double, std::milli>(ms));
}

TEST(MultipathScheduler, FasterLanePullsMoreUnderCaps) {
  PullScheduler s(SchedulerLimits{4000, 2000, 1, true});
  s.addLane(0, false);
  s.addLane(1, false);
  for (uint32_t i = 0; i < 40; ++i) s.push(ChunkRef{0, i}, 1000);
  int carried[2] = {0, 0};
  std::deque<ChunkRef> flying[2];
  double now = 0;
  // lane 0 is acked every 1 ms, lane 1 every 4 ms.
  for (int step = 0; step < 400 && !s.idle(); ++step, now += 1) {
    for (int lane : {0, 1}) {
      while (auto c = s.pull(lane, at(now), std::chrono::hours(1))) {
        EXPECT_LE(s.inFlight(), 4000u);
        EXPECT_LE(s.laneInFlight(lane), 2000u);
        flying[lane].push_back(*c);
      }
    }
    for (int lane : {0, 1}) {
      if (step % (lane == 0 ? 1 : 4) != 0 || flying[lane].empty()) continue;
      auto a = s.ack(lane, flying[lane].front());
      flying[lane].pop_front();
      EXPECT_TRUE(a.first);
      EXPECT_EQ(a.lane, lane);
      ++carried[lane];
    }
  }
  EXPECT_TRUE(s.idle());
  EXPECT_EQ(carried[0] + carried[1], 40);
  EXPECT_GT(carried[0], 2 * carried[1]);
}

TEST(MultipathScheduler, StaticSplitIsEven) {
  PullScheduler s(SchedulerLimits{1 << 30, 1 << 30, 1, false});
  for (int l = 0; l < 4; ++l) s.addLane(l, false);
  for (uint32_t i = 0; i < 40; ++i) s.push(ChunkRef{0, i}, 1000);
  int got[4] = {0, 0, 0, 0};
  for (int l = 0; l < 4; ++l)
    while (s.pull(l, at(0), std::chrono::seconds(0))) ++got[l];
  for (int l = 0; l < 4; ++l) EXPECT_EQ(got[l], 10);
}

TEST(MultipathScheduler, EndGameDuplicatesStuckChunkFirstAckWins) {
  PullScheduler s(SchedulerLimits{1 << 20, 1 << 20, 1, true});
  s.addLane(0, false);
  s.addLane(1, false);
  s.push(ChunkRef{3, 0}, 1000);
  ASSERT_TRUE(s.pull(1, at(0), std::chrono::milliseconds(10)));   // on the slow lane
  EXPECT_FALSE(s.pull(0, at(5), std::chrono::milliseconds(10)));  // not stuck long enough yet
  auto dup = s.pull(0, at(20), std::chrono::milliseconds(10));
  ASSERT_TRUE(dup);
  EXPECT_EQ(*dup, (ChunkRef{3, 0}));
  EXPECT_EQ(s.duplicates(), 1u);
  auto a = s.ack(0, ChunkRef{3, 0});
  EXPECT_TRUE(a.first);
  EXPECT_EQ(a.lane, 0);
  ASSERT_EQ(a.others.size(), 1u);
  EXPECT_EQ(a.others[0], 1);
  EXPECT_FALSE(s.ack(1, ChunkRef{3, 0}).first);
  EXPECT_EQ(s.inFlight(), 0u);
  EXPECT_TRUE(s.idle());
}

TEST(MultipathScheduler, RemovedLaneChunksAreResent) {
  PullScheduler s(SchedulerLimits{1 << 20, 1 << 20, 1, true});
  s.addLane(0, false);
  s.addLane(1, false);
  for (uint32_t i = 0; i < 4; ++i) s.push(ChunkRef{0, i}, 1000);
  std::vector<ChunkRef> on0;
  while (auto c = s.pull(0, at(0), std::chrono::hours(1))) on0.push_back(*c);
  ASSERT_EQ(on0.size(), 4u);
  s.removeLane(0);
  EXPECT_EQ(s.inFlight(), 0u);
  std::vector<ChunkRef> on1;
  while (auto c = s.pull(1, at(1), std::chrono::hours(1))) on1.push_back(*c);
  EXPECT_EQ(on1, on0);  // same chunks, oldest first
}

// Scripted rounds: `service[i]` seconds per chunk on path i, equal bytes unless given.
int runRound(ControlLoop& c, const std::vector<double>& service, const std::vector<bool>& active = {}) {
  std::vector<PathRound> r;
  for (size_t i = 0; i < service.size(); ++i) {
    PathRound p;
    p.slot = static_cast<int>(i);
    p.active = active.empty() || active[i];
    p.bytes = static_cast<uint64_t>(1e6 * 0.01 / service[i]);
    p.serviceSec = {service[i], service[i]};
    r.push_back(p);
  }
  return c.round(r, 0.01);
}

// Scripted rounds judge a path from its second round of samples on (the transports wait longer).
ControlParams certain() {
  ControlParams p;
  p.repathProbability = 1;
  p.judgeAfterSamples = 2;
  return p;
}

// A path's first round sets its service time to the median of the round's samples, in any order: the
// middle one of an odd count, the mean of the two middle ones of an even count.
TEST(MultipathControl, ARoundsServiceTimeIsTheMedianOfItsSamples) {
  ControlLoop c(certain(), 1);
  std::vector<PathRound> r(3);
  r[0].slot = 0;
  r[0].serviceSec = {0.005, 0.001, 0.004, 0.002};
  r[1].slot = 1;
  r[1].serviceSec = {0.009, 0.001, 0.003};
  r[2].slot = 2;
  r[2].serviceSec = {0.007, 0.007, 0.001, 0.008, 0.002, 0.009};
  c.round(r, 1.0);
  ASSERT_NE(c.view(0), nullptr);
  EXPECT_DOUBLE_EQ(c.view(0)->service, 0.003);
  EXPECT_DOUBLE_EQ(c.view(1)->service, 0.003);
  EXPECT_DOUBLE_EQ(c.view(2)->service, 0.007);
}

TEST(MultipathControl, SlowPathIsRepathedAfterThreeRounds) {
  ControlLoop c(certain(), 1);
  std::vector<double> s = {0.002, 0.002, 0.002, 0.008};
  EXPECT_EQ(runRound(c, s), -1);
  EXPECT_EQ(runRound(c, s), -1);  // bad from the second round on (needs two samples)
  EXPECT_EQ(runRound(c, s), -1);
  EXPECT_EQ(runRound(c, s), 3);
}

TEST(MultipathControl, AFreshPathsFirstRoundsAreNotJudged) {
  // A retransmission timeout in slow start: path 3's first chunks wait 200 ms, then it is as fast as the
  // others. Its average stays above 1.5x theirs for about 7 rounds; judged from round 2 that is a re-path on
  // a flat fabric, judged from round 8 (the transports' setting) it is nothing.
  ControlParams p = certain();
  std::vector<double> fast = {0.015, 0.015, 0.015, 0.015}, late = {0.015, 0.015, 0.015, 0.2};
  ControlLoop early(p, 1);
  int got = runRound(early, late);
  for (int i = 0; i < 12 && got < 0; ++i) got = runRound(early, fast);
  EXPECT_EQ(got, 3);  // the old setting re-paths it
  p.judgeAfterSamples = ControlParams{}.judgeAfterSamples;
  ControlLoop patient(p, 1);
  EXPECT_EQ(runRound(patient, late), -1);
  for (int i = 0; i < 30; ++i) EXPECT_EQ(runRound(patient, fast), -1) << "round " << i;
  // A path that stays slow is still named once it has been watched that long.
  ControlLoop slow(p, 1);
  int named = -1, rounds = 0;
  for (; rounds < 20 && named < 0; ++rounds) named = runRound(slow, late);
  EXPECT_EQ(named, 3);
  EXPECT_EQ(rounds, p.judgeAfterSamples + p.badRounds - 1);
}

TEST(MultipathControl, AllSiblingsSlowNothingMoves) {
  ControlLoop c(certain(), 1);
  for (int i = 0; i < 30; ++i) EXPECT_EQ(runRound(c, {0.02, 0.021, 0.019, 0.02}), -1);
}

TEST(MultipathControl, HoldDownDelaysTheNextRepath) {
  ControlParams p = certain();
  ControlLoop c(p, 1);
  std::vector<double> s = {0.002, 0.002, 0.002, 0.002, 0.009, 0.008};
  int first = -1, round = 0;
  for (; round < 10 && first < 0; ++round) first = runRound(c, s);
  ASSERT_EQ(first, 4);
  c.forget(4);
  s[4] = 0.002;  // the re-pathed slot is fine now
  int second = -1, waited = 0;
  for (; waited < 20 && second < 0; ++waited) second = runRound(c, s);
  EXPECT_EQ(second, 5);
  EXPECT_GT(waited, p.holdDownRounds);
}

TEST(MultipathControl, RepathsThatDoNotHelpBackOff) {
  ControlParams p = certain();
  ControlLoop c(p, 1);
  std::vector<double> s = {0.002, 0.002, 0.002, 0.008};  // slot 3 stays slow whatever port it gets
  std::vector<int> gaps;
  int since = 0;
  for (int round = 0; round < 1000 && gaps.size() < 7; ++round) {
    ++since;
    if (runRound(c, s) != 3) continue;
    c.forget(3);
    gaps.push_back(since);
    since = 0;
    // re-path k (from 1) was made after k-1 misses: its hold-down doubles every second miss
    EXPECT_EQ(c.holdDownNow(), p.holdDownRounds << ((gaps.size() - 1) / 2)) << "re-path " << gaps.size();
  }
  ASSERT_EQ(gaps.size(), 7u);
  // gaps[m] (m >= 1) is re-path m's hold-down plus the rounds its successor takes to look bad again
  for (size_t m = 3; m < gaps.size(); m += 2) EXPECT_GE(gaps[m], 2 * gaps[m - 2] - 2 * p.badRounds) << "gap " << m;
  EXPECT_EQ(gaps[2], gaps[1]);  // one miss alone does not lengthen the hold-down
}

TEST(MultipathControl, DeclinedRepathsHoldDownAndBackOff) {
  // Nothing better on offer (every spare no faster): each decline holds the loop down like a re-path that
  // did not help, and every second one in a row doubles the hold-down.
  ControlParams p = certain();
  ControlLoop c(p, 1);
  std::vector<double> s = {0.002, 0.002, 0.002, 0.008};
  std::vector<int> gaps;
  int since = 0;
  for (int round = 0; round < 1000 && gaps.size() < 6; ++round) {
    ++since;
    if (runRound(c, s) != 3) continue;
    c.declined();
    gaps.push_back(since);
    since = 0;
    EXPECT_EQ(c.holdDownNow(), p.holdDownRounds << (gaps.size() / 2)) << "decline " << gaps.size();
  }
  ASSERT_EQ(gaps.size(), 6u);
  // gaps[m] (m >= 1) waits out the hold-down of decline m: 6, 12, 12, 24, 24 rounds
  for (size_t m = 1; m < gaps.size(); ++m) EXPECT_GT(gaps[m], p.holdDownRounds << (m / 2)) << "gap " << m;
}

TEST(MultipathControl, RepathThatHelpsKeepsTheShortHoldDown) {
  ControlLoop c(certain(), 1);
  std::vector<double> s = {0.002, 0.002, 0.002, 0.008};
  int got = -1;
  for (int i = 0; i < 10 && got < 0; ++i) got = runRound(c, s);
  ASSERT_EQ(got, 3);
  c.forget(3);
  s[3] = 0.002;  // the new port is on a free spine
  for (int i = 0; i < 20; ++i) EXPECT_EQ(runRound(c, s), -1);
  EXPECT_EQ(c.holdDownNow(), certain().holdDownRounds);
}

TEST(MultipathControl, CoinFlipStillRepathsSoon) {
  ControlLoop c(ControlParams{}, 12345);
  int got = -1, rounds = 0;
  for (; rounds < 40 && got < 0; ++rounds) got = runRound(c, {0.002, 0.002, 0.006});
  EXPECT_EQ(got, 2);
  EXPECT_LE(rounds, 20);
}

TEST(MultipathControl, FasterSpareScoutMakesUniformActivesBad) {
  ControlLoop c(certain(), 1);
  std::vector<double> s = {0.01, 0.01, 0.01, 0.002};
  std::vector<bool> active = {true, true, true, false};
  int got = -1;
  for (int i = 0; i < 5 && got < 0; ++i) got = runRound(c, s, active);
  EXPECT_GE(got, 0);
  EXPECT_LT(got, 3);
}

TEST(MultipathControl, StallIsRelativeToSiblings) {
  ControlLoop c(certain(), 1);
  for (int i = 0; i < 3; ++i) runRound(c, {0.002, 0.002, 0.002});
  EXPECT_FALSE(c.stalled(0, 0.1));
  EXPECT_TRUE(c.stalled(0, 0.5));
  ControlLoop slow(certain(), 1);
  for (int i = 0; i < 3; ++i) runRound(slow, {0.2, 0.2, 0.2});
  EXPECT_FALSE(slow.stalled(0, 0.5));  // everyone is that slow: congestion, not a dead path
}

TEST(MultipathBytePool, ReusesBuffersWithinItsBounds) {
  BytePool pool;
  EXPECT_EQ(pool.take().capacity(), 0u);  // empty: a fresh buffer
  Bytes a(64 << 10, 7);
  const uint8_t* where = a.data();
  pool.give(std::move(a));
  Bytes b = pool.take();
  EXPECT_EQ(b.data(), where);  // the same memory comes back
  EXPECT_GE(b.capacity(), size_t{64} << 10);
  EXPECT_EQ(pool.take().capacity(), 0u);  // and only once
  // At most 4 buffers and 2 MiB are kept: a fifth, or one that would pass 2 MiB, is freed.
  for (int i = 0; i < 5; ++i) pool.give(Bytes(1024));
  int kept = 0;
  while (pool.take().capacity() > 0) ++kept;
  EXPECT_EQ(kept, 4);
  pool.give(Bytes(size_t{3} << 20));
  EXPECT_EQ(pool.take().capacity(), 0u);
}

TEST(MultipathTelemetry, LatencyQuantilesFollowTheWindow) {
  LatencyWindow w;
  EXPECT_EQ(w.quantile(0.5), 0);
  for (int i = 1; i <= 100; ++i) w.add(i);
  EXPECT_EQ(w.quantile(0.5), 51);
  EXPECT_EQ(w.quantile(0.99), 100);
  // 512 samples of 1000 push every earlier one out of the window; the quantiles lag at most 1/16 of it.
  for (int i = 0; i < 512; ++i) {
    w.add(1000);
    if (i % 7 == 0) (void)w.quantile(0.5);
  }
  EXPECT_EQ(w.quantile(0.5), 1000);
  EXPECT_EQ(w.quantile(0.1), 1000);  // a stale sorted copy holds at most 31 old samples (6%)
}

// A keeper of `n` active paths whose rounds close after 2 samples per path.
PathKeeper activeKeeper(int n, bool adaptive) {
  PathKeeperOptions o;
  o.active = n;
  o.control = certain();
  o.samplesPerPath = 2;
  o.adaptive = adaptive;
  PathKeeper k(o);
  for (int i = 0; i < n; ++i) {
    int slot = k.set().addPath(true);
    k.set().path(slot).state = PathState::kActive;
    k.set().path(slot).position = i;
  }
  return k;
}

// One round in which path i serves two 1 MB pieces in service[i] seconds each; the round ends at `now`.
int keeperRound(PathKeeper& k, const std::vector<double>& service, Clock::time_point now) {
  for (size_t i = 0; i < service.size(); ++i)
    for (int j = 0; j < 2; ++j) k.served(static_cast<int>(i), 1 << 20, service[i]);
  EXPECT_TRUE(k.roundDue());
  return k.maybeRound(now);
}

TEST(MultipathKeeper, PathsAlikeAreCalmOnlyAfterTheWholeWindow) {
  // 100 ms rounds: the 32 rounds are the later bound; 10 ms rounds: the 2 s are.
  for (int ms : {100, 10}) {
    PathKeeper k = activeKeeper(4, true);
    auto t = Clock::now();
    const int calmFrom = ms == 100 ? 31 : 200;  // round index: 32nd round / 2 s after the first
    for (int round = 0; round < calmFrom + 5; ++round) {
      t += std::chrono::milliseconds(ms);
      const double jitter = round % 2 ? 1.1 : 1.0;  // noise well inside the siblings' margin
      EXPECT_EQ(keeperRound(k, {0.002, 0.002 * jitter, 0.0021, 0.0019}, t), -1);
      EXPECT_EQ(k.calmFor(32, 2.0, t), round >= calmFrom) << ms << " ms rounds, round " << round;
    }
    EXPECT_EQ(k.bytes(1), static_cast<uint64_t>(2 * (calmFrom + 5)) << 20);
    EXPECT_EQ(k.control().rounds(), calmFrom + 5);
  }
}

TEST(MultipathKeeper, APathFallingBehindBreaksTheCalmAndIsNamed) {
  PathKeeper k = activeKeeper(4, false);  // stood down: it judges, it does not re-path
  auto t = Clock::now();
  for (int round = 0; round < 40; ++round) keeperRound(k, {0.002, 0.002, 0.002, 0.002}, t += std::chrono::seconds(1));
  ASSERT_TRUE(k.calmFor(32, 2.0, t));
  int named = -1, rounds = 0;
  while (named < 0 && rounds++ < 10) {
    EXPECT_EQ(keeperRound(k, {0.002, 0.002, 0.010, 0.002}, t += std::chrono::seconds(1)), -1);  // not adaptive
    named = k.lastNamed();
    if (rounds >= 2) {
      EXPECT_FALSE(k.calmFor(1, 0, t));  // bad twice in a row: no longer calm
    }
  }
  EXPECT_EQ(named, 2);
  EXPECT_LE(rounds, 4);  // bad from its second round on, named after three bad rounds (certain coin)
  k.setAdaptive(true);
  k.forget(2);  // as a re-path does
  EXPECT_TRUE(k.adaptive());
}

// Where a slow path goes: a spare clearly faster, else one not measured yet; the measured spares no faster
// are behind it (re-rolled), whether or not a spare is taken.
TEST(MultipathKeeper, ASlowPathMovesToAFasterSpareAndSparesBehindItAreNamed) {
  PathKeeperOptions o;
  o.active = 2;
  o.spares = 3;
  o.control = certain();
  o.samplesPerPath = 2;
  o.adaptive = false;  // judge only: the test asks for the choice itself
  o.scouts = true;
  PathKeeper k(o);
  for (int i = 0; i < 5; ++i) {
    int slot = k.set().addPath(i < 2);
    k.set().path(slot).state = i < 2 ? PathState::kActive : PathState::kSpare;
    k.set().path(slot).position = i < 2 ? i : -1;
  }
  auto t = Clock::now();
  // Seconds per chunk by slot; 0: no sample this round (spare 4 not measured yet).
  auto rounds = [&](const std::vector<double>& service, int n) {
    for (int r = 0; r < n; ++r) {
      for (size_t i = 0; i < service.size(); ++i)
        if (service[i] > 0)
          for (int j = 0; j < 2; ++j) k.served(static_cast<int>(i), 1 << 20, service[i]);
      ASSERT_TRUE(k.roundDue());
      k.maybeRound(t += std::chrono::milliseconds(100));
    }
  };
  using Behind = std::vector<int>;
  auto behind = [](const SpareChoice& c) {
    Behind v;
    for (auto [slot, service] : c.behind) v.push_back(slot);
    return v;
  };
  rounds({0.004, 0.002, 0.0042, 0.0038, 0}, 4);  // path 0 behind an elephant; spares 2 and 3 beside it
  SpareChoice c = k.chooseSpare(0, 1.25);
  EXPECT_EQ(c.take, 4);  // the unmeasured spare: a coin flip, no worse than staying
  EXPECT_EQ(behind(c), (Behind{2, 3}));
  EXPECT_NEAR(c.slowService, 0.004, 1e-4);
  EXPECT_NEAR(c.behind[0].second, 0.0042, 1e-4);
  rounds({0.004, 0.002, 0.0042, 0.0038, 0.0045}, 4);  // spare 4 measured: behind the same bottleneck too
  c = k.chooseSpare(0, 1.25);
  EXPECT_EQ(c.take, -1);  // nothing moves
  EXPECT_EQ(behind(c), (Behind{2, 3, 4}));
  rounds({0.004, 0.002, 0.0042, 0.0021, 0.0045}, 8);  // spare 3 now serves as fast as path 1
  c = k.chooseSpare(0, 1.25);
  EXPECT_EQ(c.take, 3);
  EXPECT_EQ(behind(c), (Behind{2, 4}));
  c = k.chooseSpare(1, 1.25);  // nothing serves 1.25x faster than the fastest path
  EXPECT_EQ(c.take, -1);
  EXPECT_EQ(behind(c), (Behind{2, 3, 4}));
}

}  // namespace
}  // namespace myriad::mp
