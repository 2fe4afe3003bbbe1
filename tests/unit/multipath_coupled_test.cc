// Unit tests of the coupled congestion windows (transports/multipath/coupled_window.h): nothing given up
// without losses, a loss halving one path's window once per round trip, N coupled paths growing no faster
// than one flow would, bytes shifting toward the path that loses less; and the scheduler holding a lane to
// its window, lanes under a chunk sharing the sum of their windows.
#include <gtest/gtest.h>

#include <chrono>

#include "transports/multipath/coupled_window.h"
#include "transports/multipath/scheduler.h"

namespace myriad::mp {
namespace {

constexpr double kMss = 1000;
constexpr double kRtt = 0.01;

CoupledParams params(uint64_t ceiling = 1 << 20, uint64_t floor = 1000) {
  CoupledParams p;
  p.ceiling = ceiling;
  p.floor = floor;
  p.mss = kMss;
  p.defaultRttSec = kRtt;
  return p;
}

Congestion seen(uint64_t retransmits) {
  return Congestion{retransmits, kRtt, kMss};
}

Clock::time_point at(double seconds) {
  return Clock::time_point{} + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(seconds));
}

// Lowers `slot`'s window to `w` by a loss seen with 2w in flight (the first reading only sets the baseline).
void lowerTo(CoupledWindows& cw, int slot, uint64_t w, double when) {
  cw.observe(slot, seen(0), 2 * w, at(when));
  ASSERT_TRUE(cw.observe(slot, seen(1), 2 * w, at(when)));
  ASSERT_EQ(cw.window(slot), w);
}

TEST(MultipathCoupled, WithoutLossesEveryPathKeepsTheCeiling) {
  CoupledWindows cw(params(256 << 10));
  for (int s = 0; s < 4; ++s) cw.add(s);
  for (int i = 0; i < 1000; ++i) {
    const int s = i % 4;
    cw.acked(s, 64 << 10);
    EXPECT_FALSE(cw.observe(s, seen(7), 128 << 10, at(i * 1e-3)));  // the counter as it was: no loss
  }
  for (int s = 0; s < 4; ++s) EXPECT_EQ(cw.window(s), 256u << 10);
  EXPECT_EQ(cw.total(), 4u * (256 << 10));
  EXPECT_EQ(cw.losses(), 0u);
  EXPECT_EQ(cw.window(9), 256u << 10);  // a path not coupled: the ceiling
}

TEST(MultipathCoupled, ALossHalvesThatPathOncePerRoundTripNeverBelowTheFloor) {
  CoupledWindows cw(params(1 << 20, 8000));
  cw.add(0);
  cw.add(1);
  EXPECT_FALSE(cw.observe(0, seen(3), 400000, at(1.0)));  // the first reading is the baseline
  EXPECT_TRUE(cw.observe(0, seen(5), 400000, at(1.0)));   // halved from the bytes in flight
  EXPECT_EQ(cw.window(0), 200000u);
  EXPECT_EQ(cw.window(1), 1u << 20);                                 // the other path is untouched
  EXPECT_FALSE(cw.observe(0, seen(9), 200000, at(1.0 + kRtt / 2)));  // the same loss episode
  EXPECT_EQ(cw.window(0), 200000u);
  EXPECT_TRUE(cw.observe(0, seen(10), 900000, at(1.0 + 2 * kRtt)));  // from the window, not more in flight
  EXPECT_EQ(cw.window(0), 100000u);
  for (int i = 0; i < 20; ++i) cw.observe(0, seen(11 + static_cast<uint64_t>(i)), 100000, at(2.0 + i));
  EXPECT_EQ(cw.window(0), 8000u);
  EXPECT_EQ(cw.losses(), 22u);
}

// A fresh path (a re-path's new port) starts at its siblings' mean window, not at the ceiling: churn does
// not buy aggression.
TEST(MultipathCoupled, AJoiningPathStartsAtItsSiblingsMeanWindow) {
  CoupledWindows cw(params());
  cw.add(0);
  cw.add(1);
  EXPECT_EQ(cw.window(1), 1u << 20);
  lowerTo(cw, 0, 100000, 1.0);
  lowerTo(cw, 1, 300000, 1.0);
  cw.remove(0);
  cw.add(5);
  EXPECT_EQ(cw.window(5), 300000u);
  cw.add(6);
  EXPECT_EQ(cw.window(6), 300000u);
  lowerTo(cw, 6, 30000, 2.0);
  cw.add(7);
  EXPECT_EQ(cw.window(7), (300000u + 300000u + 30000u) / 3);
}

TEST(MultipathCoupled, OnePathGrowsAsRenoDoes) {
  CoupledWindows cw(params());
  cw.add(0);
  lowerTo(cw, 0, 100000, 1.0);
  double w = 100000;
  for (int i = 0; i < 50; ++i) {
    cw.acked(0, 10000);
    w += 10000 * kMss / w;  // alpha is 1 for one path: acked * mss / w
    EXPECT_NEAR(static_cast<double>(cw.window(0)), w, 1.0);
  }
}

// The point of coupling: four paths through one bottleneck, acknowledging the same bytes as one flow, grow
// their total window no faster than that one flow grows its own (and slower than four uncoupled flows).
TEST(MultipathCoupled, FourPathsTogetherGrowNoFasterThanOneFlow) {
  CoupledWindows one(params()), four(params());
  one.add(0);
  lowerTo(one, 0, 200000, 1.0);
  for (int s = 0; s < 4; ++s) four.add(s);
  for (int s = 0; s < 4; ++s) lowerTo(four, s, 50000, 1.0);
  const double oneStart = static_cast<double>(one.total()), fourStart = static_cast<double>(four.total());
  double uncoupled = 0;
  for (int rtt = 0; rtt < 20; ++rtt) {
    // One round trip: each flow acknowledges its whole window, in chunks of 5,000 bytes.
    for (uint64_t b = 0; b < one.window(0); b += 5000) one.acked(0, 5000);
    for (int s = 0; s < 4; ++s) {
      const uint64_t w = four.window(s);
      uncoupled += kMss;  // each path as a flow of its own (Reno): one mss per round trip
      for (uint64_t b = 0; b < w; b += 5000) four.acked(s, 5000);
    }
  }
  const double oneGrew = static_cast<double>(one.total()) - oneStart;
  const double fourGrew = static_cast<double>(four.total()) - fourStart;
  EXPECT_GT(fourGrew, 0);
  EXPECT_LE(fourGrew, oneGrew * 1.01);
  EXPECT_LT(fourGrew, uncoupled / 2);
  EXPECT_NEAR(oneGrew, 20 * kMss, 2 * kMss);  // one flow: about one mss per round trip
}

// A path that keeps losing (behind a congested spine) ends with a smaller window than its sibling that does
// not, so the bytes shift to the sibling.
TEST(MultipathCoupled, BytesShiftTowardThePathThatLosesLess) {
  CoupledWindows cw(params(1 << 20, 2000));
  cw.add(0);
  cw.add(1);
  lowerTo(cw, 0, 100000, 0.0);
  lowerTo(cw, 1, 100000, 0.0);
  uint64_t lossy = 1;
  for (int rtt = 1; rtt <= 200; ++rtt) {
    for (int s = 0; s < 2; ++s)
      for (uint64_t b = 0; b < cw.window(s); b += 5000) cw.acked(s, 5000);
    if (rtt % 5 == 0) cw.observe(0, seen(++lossy), cw.window(0), at(rtt * 2 * kRtt));
    cw.observe(1, seen(1), cw.window(1), at(rtt * 2 * kRtt));
  }
  EXPECT_GT(cw.window(1), 3 * cw.window(0));
}

TEST(MultipathCoupled, SchedulerHoldsALaneToItsWindow) {
  PullScheduler s(SchedulerLimits{1 << 20, 256 << 10, 1, true});
  s.addLane(0, false);
  s.addLane(1, false);
  for (uint32_t i = 0; i < 16; ++i) s.push(ChunkRef{1, i}, 64 << 10);
  const auto now = Clock::now();
  const auto never = std::chrono::hours(1);
  s.setWindow(0, 100 << 10);  // room for one 64 KiB chunk, not two
  ASSERT_TRUE(s.pull(0, now, never));
  EXPECT_FALSE(s.pull(0, now, never));
  s.setWindow(0, UINT64_MAX);  // no window: the lane cap, four chunks
  int more = 0;
  while (s.pull(0, now, never)) ++more;
  EXPECT_EQ(more, 3);
}

// Windows below a chunk: each lane may hold one chunk only while the windowed lanes together stay within
// the sum of their windows, so four lanes at small windows do not keep four chunks in flight.
TEST(MultipathCoupled, LanesUnderAChunkShareTheSumOfTheirWindows) {
  PullScheduler s(SchedulerLimits{1 << 20, 256 << 10, 1, true});
  for (int l = 0; l < 4; ++l) {
    s.addLane(l, false);
    s.setWindow(l, 20 << 10);  // 80 KiB together: one 64 KiB chunk in flight, not four
  }
  for (uint32_t i = 0; i < 16; ++i) s.push(ChunkRef{1, i}, 64 << 10);
  const auto now = Clock::now();
  const auto never = std::chrono::hours(1);
  ASSERT_TRUE(s.pull(2, now, never));
  for (int l = 0; l < 4; ++l) EXPECT_FALSE(s.pull(l, now, never)) << "lane " << l;
  s.addLane(7, true);  // a scout's chunk counts against the windows' sum too
  EXPECT_FALSE(s.pull(7, now, never));
  for (int l = 0; l < 4; ++l) s.setWindow(l, 40 << 10);  // 160 KiB together: two chunks
  EXPECT_TRUE(s.pull(7, now, never));
  EXPECT_FALSE(s.pull(0, now, never));
  EXPECT_EQ(s.inFlight(), 2u * (64 << 10));
  s.ack(2, ChunkRef{1, 0});  // the first chunk lands: room for one more
  EXPECT_TRUE(s.pull(3, now, never));
  EXPECT_FALSE(s.pull(1, now, never));
}

}  // namespace
}  // namespace myriad::mp
