// The liveness channel on its own: its datagrams against hostile bytes, the watch graph's shape, and
// channels of several ranks in this process on the loopback, where a rank that never starts must be
// declared unresponsive by all (the ones not watching it hear it through the flood) and a rank that leaves
// must be counted as left, never as dead.
#include "core/liveness.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <mutex>
#include <queue>
#include <random>
#include <set>
#include <thread>

namespace myriad {
namespace {

using liveness::Datagram;
using liveness::Fate;
using liveness::FateKind;
using liveness::Kind;

Datagram sample() {
  Datagram d;
  d.kind = Kind::kState;
  d.commKey = 0x1234567890abcdefull;
  d.from = 3;
  d.state.seq = 1234;
  d.state.inCall = true;
  d.state.op = "all_reduce";
  d.state.count = 4 << 20;
  d.state.dtype = "float32";
  d.state.sinceMs = 61000;
  d.state.waitsOn = 7;
  d.state.quietMs = 60500;
  d.fates.push_back(Fate{5, FateKind::kDead, "rank 5 (node-a pid 6380) exited"});
  d.fates.push_back(Fate{6, FateKind::kLeft, "rank 6 left"});
  return d;
}

TEST(LivenessWire, RoundTrip) {
  const Datagram d = sample();
  const Bytes b = liveness::encode(d);
  ASSERT_LE(b.size(), liveness::kMaxDatagram);
  auto got = liveness::decode(b.data(), b.size(), d.commKey, 8);
  ASSERT_TRUE(got.isOk()) << got.status().message();
  const Datagram& e = got.value();
  EXPECT_EQ(e.kind, d.kind);
  EXPECT_EQ(e.from, 3);
  EXPECT_EQ(e.state.seq, 1234u);
  EXPECT_TRUE(e.state.inCall);
  EXPECT_EQ(e.state.op, "all_reduce");
  EXPECT_EQ(e.state.count, uint64_t{4} << 20);
  EXPECT_EQ(e.state.dtype, "float32");
  EXPECT_EQ(e.state.sinceMs, 61000u);
  EXPECT_EQ(e.state.waitsOn, 7);
  EXPECT_EQ(e.state.quietMs, 60500u);
  ASSERT_EQ(e.fates.size(), 2u);
  EXPECT_EQ(e.fates[0].rank, 5);
  EXPECT_EQ(e.fates[0].kind, FateKind::kDead);
  EXPECT_EQ(e.fates[0].text, d.fates[0].text);
  EXPECT_EQ(e.fates[1].kind, FateKind::kLeft);
}

TEST(LivenessWire, RefusesWhatIsNotOneOfOurs) {
  const Datagram d = sample();
  const Bytes b = liveness::encode(d);
  EXPECT_FALSE(liveness::decode(b.data(), b.size(), d.commKey + 1, 8).isOk()) << "another communicator";
  EXPECT_FALSE(liveness::decode(b.data(), b.size(), d.commKey, 3).isOk()) << "sender out of range";
  EXPECT_FALSE(liveness::decode(b.data(), b.size(), d.commKey, 6).isOk()) << "a fate out of range";
  for (size_t n = 0; n < b.size(); ++n)
    EXPECT_FALSE(liveness::decode(b.data(), n, d.commKey, 8).isOk()) << "truncated to " << n << " bytes";
  Bytes longer = b;
  longer.push_back(0);
  EXPECT_FALSE(liveness::decode(longer.data(), longer.size(), d.commKey, 8).isOk()) << "trailing byte";
  // Every single-byte change either decodes to a datagram that passes the range checks or is refused;
  // random bytes never crash the decoder.
  std::mt19937 rng(7);
  for (int i = 0; i < 20000; ++i) {
    Bytes m = b;
    m[rng() % m.size()] = static_cast<uint8_t>(rng());
    if (i % 2) m.resize(rng() % (m.size() + 1));
    auto got = liveness::decode(m.data(), m.size(), d.commKey, 8);
    if (!got.isOk()) continue;
    EXPECT_GE(got.value().from, 0);
    EXPECT_LT(got.value().from, 8);
    for (const Fate& f : got.value().fates) EXPECT_TRUE(f.rank >= 0 && f.rank < 8);
  }
}

TEST(LivenessWire, CutsOversizedFields) {
  Datagram d = sample();
  d.fates.assign(9, Fate{1, FateKind::kDead, std::string(1000, 'x')});
  const Bytes b = liveness::encode(d);
  ASSERT_LE(b.size(), liveness::kMaxDatagram);
  auto got = liveness::decode(b.data(), b.size(), d.commKey, 8);
  ASSERT_TRUE(got.isOk()) << got.status().message();
  EXPECT_EQ(got.value().fates.size(), liveness::kMaxFates);
  EXPECT_EQ(got.value().fates[0].text.size(), liveness::kMaxFateText);
}

// The tag: the sealed bytes verify under their key only; any changed byte, or another key, fails.
TEST(LivenessWire, SealedDatagramsFailUnderAnotherKeyOrAnyChange) {
  const uint8_t secret[16] = {9};
  const auth::Key key = Liveness::tagKey(secret, sizeof(secret), "tag"),
                  other = Liveness::tagKey(secret, sizeof(secret), "tag2");
  Bytes b = liveness::encode(sample());
  const size_t plain = b.size();
  liveness::seal(&b, key);
  ASSERT_EQ(b.size(), plain + liveness::kTagBytes);
  EXPECT_TRUE(liveness::tagValid(b.data(), b.size(), key));
  EXPECT_FALSE(liveness::tagValid(b.data(), b.size(), other));
  EXPECT_FALSE(liveness::tagValid(b.data(), plain, key)) << "unsealed";
  for (size_t i = 0; i < b.size(); i += 7) {
    Bytes m = b;
    m[i] ^= 0x01;
    EXPECT_FALSE(liveness::tagValid(m.data(), m.size(), key)) << "byte " << i << " changed";
  }
  EXPECT_FALSE(liveness::tagValid(b.data(), 3, key));
}

// Ranks reachable from `from` over the watch graph without passing through `removed`.
size_t reachable(int nranks, int from, const std::set<int>& removed) {
  std::vector<bool> seen(static_cast<size_t>(nranks));
  std::queue<int> q;
  q.push(from);
  seen[static_cast<size_t>(from)] = true;
  size_t n = 0;
  while (!q.empty()) {
    int r = q.front();
    q.pop();
    ++n;
    for (int x : Liveness::neighbours(r, nranks))
      if (!removed.count(x) && !seen[static_cast<size_t>(x)]) seen[static_cast<size_t>(x)] = true, q.push(x);
  }
  return n;
}

TEST(LivenessGraph, SparseSymmetricAndConnectedWithoutAnyRunOfRanks) {
  for (int n : {1, 2, 3, 4, 5, 8, 13, 64, 100, 257}) {
    for (int r = 0; r < n; ++r) {
      auto nb = Liveness::neighbours(r, n);
      EXPECT_LE(nb.size(), 5u) << "rank " << r << " of " << n;
      EXPECT_EQ(std::count(nb.begin(), nb.end(), r), 0);
      for (int x : nb) {
        auto back = Liveness::neighbours(x, n);
        EXPECT_TRUE(std::count(back.begin(), back.end(), r)) << r << " watches " << x << " but not back, n " << n;
      }
    }
    if (n < 3) continue;
    // A host of up to 8 consecutive ranks dies: the others still reach each other.
    for (int run = 1; run <= std::min(8, n - 2); ++run)
      for (int first = 0; first < n; ++first) {
        std::set<int> removed;
        for (int k = 0; k < run; ++k) removed.insert((first + k) % n);
        int start = (first + run) % n;
        EXPECT_EQ(reachable(n, start, removed), static_cast<size_t>(n - run))
            << "n " << n << ", ranks " << first << ".." << first + run - 1 << " removed";
      }
  }
  EXPECT_LE(Liveness::neighbours(65535, 131072).size(), 5u);
}

// Several ranks' channels in this process.
struct Fleet {
  struct Heard {
    std::mutex mu;
    std::map<int, Fate> fates;
  };
  int n;
  std::vector<PeerInfo> peers;
  std::vector<std::unique_ptr<Heard>> heard;  // outlives the channels, whose threads write it
  std::vector<std::unique_ptr<Liveness>> live;

  Fleet(int nranks, int heartbeatMs, int deadMs, const std::set<int>& notStarted) : n(nranks) {
    auto host = SockAddr::parse("127.0.0.1:0");
    EXPECT_TRUE(host.isOk());
    peers.resize(static_cast<size_t>(n));
    for (int r = 0; r < n; ++r) {
      auto l = Liveness::bind(host.value());
      EXPECT_TRUE(l.isOk()) << l.status().message();
      live.push_back(l.take());
      heard.push_back(std::make_unique<Heard>());
      PeerInfo& p = peers[static_cast<size_t>(r)];
      p.rank = r;
      p.pid = 1000 + r;
      p.hostId = "host-" + std::to_string(r);  // no pidfds: every rank is watched by heartbeats
      p.hostname = "node" + std::to_string(r);
      p.livenessAddr = live.back()->address();
    }
    for (int r = 0; r < n; ++r) {
      if (notStarted.count(r)) continue;
      Liveness::Options o;
      o.rank = r;
      o.nranks = n;
      o.peers = &peers;
      o.commKey = 42;
      o.heartbeatMs = heartbeatMs;
      o.deadMs = deadMs;
      o.self = [r] {
        liveness::SelfState s;
        s.seq = static_cast<uint64_t>(10 + r);
        s.op = "all_reduce";
        return s;
      };
      Heard* h = heard[static_cast<size_t>(r)].get();
      o.onFate = [h](const Fate& f) {
        std::lock_guard<std::mutex> lock(h->mu);
        EXPECT_EQ(h->fates.count(f.rank), 0u) << "a fate is told once";
        h->fates.emplace(f.rank, f);
      };
      live[static_cast<size_t>(r)]->start(std::move(o));
    }
  }
  std::optional<Fate> heardOf(int who, int about) {
    std::lock_guard<std::mutex> lock(heard[static_cast<size_t>(who)]->mu);
    auto it = heard[static_cast<size_t>(who)]->fates.find(about);
    if (it == heard[static_cast<size_t>(who)]->fates.end()) return std::nullopt;
    return it->second;
  }
};

TEST(LivenessChannel, ARankThatNeverBeatsIsDeclaredByAll) {
  const int n = 12, silent = 7, deadMs = 600;
  Fleet f(n, 50, deadMs, {silent});
  const auto t0 = Clock::now();
  std::vector<int> missing;
  for (;;) {
    missing.clear();
    for (int r = 0; r < n; ++r)
      if (r != silent && !f.heardOf(r, silent)) missing.push_back(r);
    if (missing.empty() || Clock::now() - t0 > std::chrono::seconds(10)) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  const auto tookMs = msSince(t0);
  ASSERT_TRUE(missing.empty()) << missing.size() << " ranks never heard of rank " << silent << ", e.g. rank "
                               << missing[0];
  EXPECT_GE(tookMs, deadMs) << "declared before the silence bound";
  EXPECT_LT(tookMs, deadMs + 1500) << "the flood took too long";
  for (int r = 0; r < n; ++r) {
    if (r == silent) continue;
    auto fate = f.heardOf(r, silent);
    EXPECT_EQ(fate->kind, FateKind::kDead);
    EXPECT_NE(fate->text.find("rank 7 (node7 pid 1007)"), std::string::npos) << fate->text;
    EXPECT_NE(fate->text.find("stopped answering heartbeats"), std::string::npos) << fate->text;
    for (int other = 0; other < n; ++other) {
      if (other == silent || other == r) continue;
      EXPECT_FALSE(f.heardOf(r, other)) << r << " heard of live rank " << other;
    }
  }
}

TEST(LivenessChannel, ALeavingRankIsLeftNotDead) {
  const int n = 6, leaver = 2, deadMs = 300;
  Fleet f(n, 50, deadMs, {});
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  f.live[leaver]->leave();
  std::this_thread::sleep_for(std::chrono::milliseconds(3 * deadMs));
  for (int r = 0; r < n; ++r) {
    if (r == leaver) continue;
    auto fate = f.heardOf(r, leaver);
    ASSERT_TRUE(fate.has_value()) << "rank " << r << " did not hear that rank 2 left";
    EXPECT_EQ(fate->kind, FateKind::kLeft) << fate->text;
    EXPECT_NE(fate->text.find("after its call #12 (all_reduce)"), std::string::npos) << fate->text;
  }
}

TEST(LivenessChannel, AWaiterSeesThePeerItAsksAbout) {
  const int n = 9;
  Fleet f(n, 50, 2000, {});
  // Rank 0 and rank 5 are not neighbours: rank 0 learns rank 5's state only by asking.
  auto nb = Liveness::neighbours(0, n);
  ASSERT_EQ(std::count(nb.begin(), nb.end(), 5), 0);
  Liveness::View v;
  const auto t0 = Clock::now();
  do {
    v = f.live[0]->view(5, 100);
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  } while (!v.known && Clock::now() - t0 < std::chrono::seconds(5));
  ASSERT_TRUE(v.known);
  EXPECT_EQ(v.state.seq, 15u);
  EXPECT_EQ(v.state.op, "all_reduce");
}

}  // namespace
}  // namespace myriad
