// algo tier, send/recv in groups: every registered sendrecv.* algorithm (cases from harness.h). Each round is
// one group holding a ring (to rank+1, from rank-1) and all pairs (to and from every rank, self included), so
// rank+1 gets two messages that must keep their order; every dtype in turn at counts {0, 1, 13, 1009}, then
// the ring at 1<<20 with a seeded dtype. Plus a group of only self sends. Gaps and guards must stay canary.
#include <gtest/gtest.h>

#include <random>

#include "buffers.h"
#include "harness.h"
#include "tests/common/dtype_values.h"

namespace myriad::test {
namespace {

struct Round {
  myrDataType_t type;
  size_t ringCount, pairCount;
};

std::vector<Round> makeRounds(uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<Round> out;
  const size_t kCounts[] = {0, 1, 13, 1009};
  for (int t = 0; t < kNumDataTypes; ++t)
    for (size_t i = 0; i < std::size(kCounts); ++i)
      out.push_back({static_cast<myrDataType_t>(t), kCounts[i], kCounts[(i + static_cast<size_t>(t)) % 4]});
  out.push_back({static_cast<myrDataType_t>(rng() % kNumDataTypes), size_t{1} << 20, 3});
  out.push_back({myrFloat32, kPeriod, 0});
  return out;
}

// Receive blocks sit one after another with `kGap` canary bytes between them.
constexpr size_t kGap = 8;

std::string runRound(RankCtx& ctx, const Round& r, int call, const Pattern& pattern) {
  int n = ctx.nranks(), me = ctx.rank(), next = (me + 1) % n, prev = (me + n - 1) % n;
  size_t es = dataTypeSize(r.type), ringBytes = r.ringCount * es, pairBytes = r.pairCount * es;
  size_t nb = static_cast<size_t>(n);
  // Sources: call + 0 for rank s's ring message, call + 1 + s * n + d for the pair message s -> d.
  auto ringSrc = [&](int s) { return call + s * (n + 1); };
  auto pairSrc = [&](int s, int d) { return call + s * (n + 1) + 1 + d; };
  Guarded send(ringBytes + nb * pairBytes), recv(ringBytes + nb * (pairBytes + kGap));
  send.fillCanary(), recv.fillCanary();
  pattern.fill(send.data(), ringBytes, ringSrc(me));
  for (int d = 0; d < n; ++d)
    pattern.fill(send.data() + ringBytes + static_cast<size_t>(d) * pairBytes, pairBytes, pairSrc(me, d));
  std::vector<uint8_t> input(send.data(), send.data() + send.size());
  auto pairRecv = [&](int s) { return recv.data() + ringBytes + kGap + static_cast<size_t>(s) * (pairBytes + kGap); };
  CollArgs args = collArgs(CollKind::kSendRecv, nullptr, nullptr, 0, r.type);
  args.p2p.push_back({true, next, send.data(), ringBytes});
  args.p2p.push_back({false, prev, recv.data(), ringBytes});
  for (int p = 0; p < n; ++p) {
    args.p2p.push_back({true, p, send.data() + ringBytes + static_cast<size_t>(p) * pairBytes, pairBytes});
    args.p2p.push_back({false, p, pairRecv(p), pairBytes});
  }
  std::string err = ctx.call(args, [&](myrComm_t comm) {
    myrResult_t rc = myrGroupStart();
    for (const P2pCall& p : args.p2p) {
      myrResult_t one = p.send ? myrSend(p.buf, p.bytes / es, r.type, p.peer, comm, nullptr)
                               : myrRecv(p.buf, p.bytes / es, r.type, p.peer, comm, nullptr);
      if (rc == myrSuccess) rc = one;
    }
    myrResult_t end = myrGroupEnd();
    return rc == myrSuccess ? end : rc;
  });
  if (err.empty()) err = pattern.check(recv.data(), ringBytes, ringSrc(prev), 0, "ring message:");
  for (int s = 0; s < n && err.empty(); ++s) {
    err = recv.untouched(static_cast<size_t>(pairRecv(s) - recv.data()) - kGap,
                         static_cast<size_t>(pairRecv(s) - recv.data()),
                         "gap before the block from " + std::to_string(s));
    if (err.empty())
      err = pattern.check(pairRecv(s), pairBytes, pairSrc(s, me), 0, "block from " + std::to_string(s) + ":");
  }
  if (err.empty()) err = recv.guardsIntact("recv buffers");
  if (err.empty()) err = unchanged(send.data(), input, "send buffers");
  if (err.empty()) err = send.guardsIntact("send buffers");
  return err;
}

// A group of nothing but sends to self and their receives: three of them, matched in call order.
std::string selfOnly(RankCtx& ctx, const Pattern& pattern, int call) {
  const size_t kBytes[] = {4, 0, 4 * 1009};
  Guarded send(4 + 4 * 1009), recv(4 + 4 * 1009 + 2 * kGap);
  send.fillCanary(), recv.fillCanary();
  CollArgs args = collArgs(CollKind::kSendRecv, nullptr, nullptr, 0, myrFloat32);
  size_t so = 0, ro = 0;
  for (size_t k = 0; k < 3; ++k) {
    pattern.fill(send.data() + so, kBytes[k], call + static_cast<int>(k));
    args.p2p.push_back({true, ctx.rank(), send.data() + so, kBytes[k]});
    args.p2p.push_back({false, ctx.rank(), recv.data() + ro, kBytes[k]});
    so += kBytes[k], ro += kBytes[k] + kGap;
  }
  std::string err = ctx.call(args, [&](myrComm_t comm) {
    myrResult_t rc = myrGroupStart();
    for (const P2pCall& p : args.p2p) {
      myrResult_t one = p.send ? myrSend(p.buf, p.bytes / 4, myrFloat32, p.peer, comm, nullptr)
                               : myrRecv(p.buf, p.bytes / 4, myrFloat32, p.peer, comm, nullptr);
      if (rc == myrSuccess) rc = one;
    }
    myrResult_t end = myrGroupEnd();
    return rc == myrSuccess ? end : rc;
  });
  ro = 0;
  for (size_t k = 0; k < 3 && err.empty(); ++k) {
    err =
        pattern.check(recv.data() + ro, kBytes[k], call + static_cast<int>(k), 0, "self message " + std::to_string(k));
    if (err.empty()) err = recv.untouched(ro + kBytes[k], ro + kBytes[k] + kGap, "gap after self message");
    ro += kBytes[k] + kGap;
  }
  if (err.empty()) err = recv.guardsIntact("self recv buffer");
  return err;
}

class SendRecvAlgo : public ::testing::TestWithParam<Case> {};

TEST_P(SendRecvAlgo, RingAndAllPairsInOneGroup) {
  const Case& c = GetParam();
  uint64_t seed = testSeed();
  auto rounds = makeRounds(seed);
  Pattern pattern(seed);
  int span = c.nranks * (c.nranks + 1) + 1;
  runCase(c, seed, [&](RankCtx& ctx) {
    for (size_t k = 0; k < rounds.size(); ++k) {
      std::string err = runRound(ctx, rounds[k], static_cast<int>(k) * span, pattern);
      if (!err.empty())
        return "round " + std::to_string(k) + " (" + dataTypeName(rounds[k].type) + ", ring count " +
               std::to_string(rounds[k].ringCount) + ", pair count " + std::to_string(rounds[k].pairCount) +
               "): " + err;
    }
    std::string err = selfOnly(ctx, pattern, static_cast<int>(rounds.size()) * span);
    return err.empty() ? err : "self-only group: " + err;
  });
}

INSTANTIATE_TEST_SUITE_P(All, SendRecvAlgo, ::testing::ValuesIn(casesFor(CollKind::kSendRecv)), caseName);

}  // namespace
}  // namespace myriad::test
