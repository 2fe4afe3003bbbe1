// unit tier: QpPaths, the sending side's QP choice, with scripted completion times (no device). Pull gives
// a QP that completes slowly fewer pieces; the control loop retires a QP whose completions lag its sibling's
// and a spare takes its position (its port then tabu); the static split is even and never re-paths; the
// higher rank, given the lower one's ports as presets, holds the same port in every slot; RoCEv2 port ranges.
#include "transports/rdma/qp_paths.h"

#include <gtest/gtest.h>

#include <chrono>
#include <set>

namespace myriad {
namespace {

using namespace std::chrono_literals;

QpPathOptions options(bool adaptive, std::vector<uint16_t> preset = {50001, 50002, 50003, 50004}) {
  QpPathOptions o;
  o.active = 2;
  o.spares = 2;
  o.adaptive = adaptive;
  o.capBytes = 128 << 10;
  o.ports.lo = 0xC000;
  o.ports.hi = 0xFFFF;
  o.ports.preset = std::move(preset);
  o.seed = 7;
  o.control.repathProbability = 1;  // deterministic for the test
  return o;
}

const auto kRoom = [](int) { return true; };

// Drives `pieces` of 64 KiB through the paths: slot `slow` completes `slowBy` after its post, the others
// after 10 ms; time advances 1 ms per step. Returns the bytes each slot carried.
std::vector<uint64_t> drive(QpPaths& p, int pieces, int slow, Clock::duration slowBy, std::vector<int>* retired) {
  Clock::time_point now = Clock::now();
  std::vector<std::deque<Clock::time_point>> due(static_cast<size_t>(p.slots()));
  std::vector<uint64_t> carried(static_cast<size_t>(p.slots()), 0);
  int posted = 0, done = 0;
  while (done < pieces) {
    now += 1ms;
    for (int s = 0; s < p.slots(); ++s) {
      auto& d = due[static_cast<size_t>(s)];
      while (!d.empty() && d.front() <= now) {
        d.pop_front();
        p.completed(s, now);
        ++done;
      }
    }
    QpPaths::Repath r = p.maybeRound(now);
    if (r.retired >= 0 && retired) retired->push_back(r.retired);
    while (posted < pieces) {
      int s = p.pick(static_cast<size_t>(posted), static_cast<size_t>(pieces), 0, kRoom);
      if (s < 0) break;
      p.posted(s, 64 << 10, now);
      due[static_cast<size_t>(s)].push_back(now + (s == slow ? slowBy : Clock::duration(10ms)));
      carried[static_cast<size_t>(s)] += 64 << 10;
      ++posted;
    }
  }
  return carried;
}

TEST(QpPaths, PortsFromPresetsFirstActiveThenSpares) {
  QpPaths p(options(true));
  EXPECT_EQ(p.ports(), (std::vector<uint16_t>{50001, 50002, 50003, 50004}));
  EXPECT_EQ(p.slotAt(0), 0);
  EXPECT_EQ(p.slotAt(1), 1);
  EXPECT_EQ(p.state(2), mp::PathState::kSpare);
  // Random ports: distinct, all RoCEv2 source ports; the higher rank adopts them slot by slot.
  QpPathOptions o = options(true, {});
  o.active = 4;
  QpPaths lower(o);
  std::set<uint16_t> distinct;
  for (uint16_t port : lower.ports()) {
    EXPECT_GE(port, 0xC000);
    distinct.insert(port);
  }
  EXPECT_EQ(distinct.size(), 6u);
  o.ports.preset = lower.ports();
  o.seed = 99;
  EXPECT_EQ(QpPaths(o).ports(), lower.ports());
}

TEST(QpPaths, PullGivesTheSlowQpLess) {
  QpPathOptions o = options(true);
  o.control.latencyFactor = 1e9;  // never re-path: this test looks at the split only
  QpPaths p(o);
  std::vector<uint64_t> c = drive(p, 400, 1, 80ms, nullptr);
  EXPECT_GT(c[0], 3 * c[1]) << c[0] << " vs " << c[1];
  EXPECT_EQ(c[2] + c[3], 0u);  // spares carry nothing
  EXPECT_EQ(p.repaths(), 0);
}

TEST(QpPaths, SlowQpIsRetiredAndASpareTakesItsPosition) {
  QpPaths p(options(true));
  std::vector<int> retired;
  std::vector<uint64_t> c = drive(p, 600, 0, 60ms, &retired);
  ASSERT_FALSE(retired.empty());
  EXPECT_EQ(retired.front(), 0);
  EXPECT_NE(p.state(0), mp::PathState::kActive);
  EXPECT_EQ(p.slotAt(0), 2);  // the first spare holds position 0 now
  EXPECT_GT(c[2], 0u);
  mp::PeerTelemetry t = p.telemetry("c", 0, 1);
  ASSERT_EQ(t.paths.size(), 4u);
  EXPECT_EQ(t.paths[2].state, "active");
  EXPECT_EQ(t.paths[2].repaths, 1u);
  EXPECT_EQ(t.repaths, static_cast<uint64_t>(p.repaths()));
  uint64_t sum = 0;
  for (const auto& path : t.paths) sum += path.bytes;
  EXPECT_EQ(sum, uint64_t{600} * (64 << 10));
}

TEST(QpPaths, StaticSplitIsEvenAndNeverRepaths) {
  QpPaths p(options(false));
  std::vector<uint64_t> c = drive(p, 400, 0, 60ms, nullptr);
  EXPECT_EQ(c[0], c[1]);
  EXPECT_EQ(p.repaths(), 0);
  EXPECT_EQ(p.slotAt(0), 0);
  // One-piece messages alternate over the positions by sequence number.
  EXPECT_EQ(p.pick(0, 1, 4, kRoom), 0);
  EXPECT_EQ(p.pick(0, 1, 5, kRoom), 1);
  EXPECT_EQ(p.pick(0, 1, 5, [](int s) { return s != 1; }), -1);
}

TEST(QpPaths, RoceV2PortRange) {
  auto def = rdmaPortRange("");
  ASSERT_TRUE(def.isOk());
  EXPECT_EQ(def.value().lo, 0xC000);
  EXPECT_EQ(def.value().hi, 0xFFFF);
  auto cut = rdmaPortRange("40000-50000");
  ASSERT_TRUE(cut.isOk()) << cut.status().toString();
  EXPECT_EQ(cut.value().lo, 0xC000);
  EXPECT_EQ(cut.value().hi, 50000);
  auto low = rdmaPortRange("40000,50001");
  ASSERT_FALSE(low.isOk());
  EXPECT_NE(low.status().message().find("port 40000"), std::string::npos) << low.status().message();
  auto none = rdmaPortRange("32768-40000");
  ASSERT_FALSE(none.isOk());
  EXPECT_NE(none.status().message().find("49152-65535"), std::string::npos) << none.status().message();
  EXPECT_FALSE(rdmaPortRange("nonsense").isOk());
}

}  // namespace
}  // namespace myriad
