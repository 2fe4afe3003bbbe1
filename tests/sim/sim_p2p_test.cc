// The sim tier's calls with per-peer shapes: groups of sends and receives (sendrecv.*: seeded random
// message graphs, self messages and empty ones included, every rank's calls in a seeded interleaving that
// keeps each pair's order) and all-to-allv (alltoall.*, whose hierarchical plan has a second stage planned
// from exchanged counts: per-pair counts with a third of zeros, displacements shuffled with gaps, a third
// of the rounds in place with symmetric counts). Cases as in the matrix (sim_cases.h); gaps and guards must
// stay canary, send buffers unchanged. A failure prints MYRIAD_TEST_SEED=<seed>, which replays it.
#include <gtest/gtest.h>

#include <algorithm>
#include <iostream>
#include <random>

#include "dispatch/registry.h"
#include "tests/algo/harness.h"
#include "tests/common/dtype_values.h"
#include "tests/sim/sim_cases.h"

namespace myriad::sim {
namespace {

constexpr size_t kGap = 8;  // canary bytes between two blocks of one buffer
constexpr int kRounds = 40;
const size_t kCounts[] = {0, 0, 1, 2, 13, 7, 1009, 3, 0, 64};

struct Msg {
  int src, dst;
  size_t bytes;
};

// One group: messages in a seeded global order; each rank calls its sends and receives in that order.
std::string groupRound(CaseRunner& runner, int n, std::mt19937_64& rng, const test::Pattern& pattern, int source) {
  std::vector<Msg> msgs;
  auto type = static_cast<myrDataType_t>(rng() % test::kNumDataTypes);
  size_t es = test::dataTypeSize(type), nb = static_cast<size_t>(n);
  for (size_t k = 0, total = rng() % (3 * nb + 2); k < total; ++k)
    msgs.push_back({static_cast<int>(rng() % nb), static_cast<int>(rng() % nb), kCounts[rng() % 10] * es});
  std::vector<size_t> sendAt(msgs.size()), recvAt(msgs.size()), sendSize(nb), recvSize(nb, kGap);
  for (size_t m = 0; m < msgs.size(); ++m) {
    sendAt[m] = sendSize[static_cast<size_t>(msgs[m].src)], sendSize[static_cast<size_t>(msgs[m].src)] += msgs[m].bytes;
    recvAt[m] = recvSize[static_cast<size_t>(msgs[m].dst)];
    recvSize[static_cast<size_t>(msgs[m].dst)] += msgs[m].bytes + kGap;
  }
  std::vector<test::Guarded> send(nb), recv(nb);
  std::vector<CollArgs> args(nb);
  for (size_t r = 0; r < nb; ++r) {
    send[r].resize(sendSize[r]), send[r].fillCanary(), recv[r].resize(recvSize[r]), recv[r].fillCanary();
    args[r].kind = CollKind::kSendRecv, args[r].dtype = type;
  }
  for (size_t m = 0; m < msgs.size(); ++m) {
    auto s = static_cast<size_t>(msgs[m].src), d = static_cast<size_t>(msgs[m].dst);
    pattern.fill(send[s].data() + sendAt[m], msgs[m].bytes, source + static_cast<int>(m));
    args[s].p2p.push_back({true, msgs[m].dst, send[s].data() + sendAt[m], msgs[m].bytes});
    args[d].p2p.push_back({false, msgs[m].src, recv[d].data() + recvAt[m], msgs[m].bytes});
  }
  std::vector<std::vector<uint8_t>> input(nb);
  for (size_t r = 0; r < nb; ++r) input[r].assign(send[r].data(), send[r].data() + send[r].size());
  std::string err = runner.run(args);
  for (size_t m = 0; m < msgs.size() && err.empty(); ++m) {
    auto d = static_cast<size_t>(msgs[m].dst);
    err = pattern.check(recv[d].data() + recvAt[m], msgs[m].bytes, source + static_cast<int>(m), 0,
                        "rank " + std::to_string(d) + ", message " + std::to_string(m) + " from rank " +
                            std::to_string(msgs[m].src) + ":");
    if (err.empty()) err = recv[d].untouched(recvAt[m] - kGap, recvAt[m], "rank " + std::to_string(d) + " gap");
  }
  for (size_t r = 0; r < nb && err.empty(); ++r) {
    err = recv[r].guardsIntact("rank " + std::to_string(r) + " recv");
    if (err.empty()) err = test::unchanged(send[r].data(), input[r], "rank " + std::to_string(r) + " send");
    if (err.empty()) err = send[r].guardsIntact("rank " + std::to_string(r) + " send");
  }
  return err.empty() ? "" : std::to_string(msgs.size()) + " messages, " + test::dataTypeName(type) + ": " + err;
}

// Segments of `sizes` (elements) in a shuffled order with gaps of 0-5 elements.
std::vector<size_t> layOut(const std::vector<size_t>& sizes, std::mt19937_64& rng, size_t* extent) {
  std::vector<size_t> order(sizes.size()), displs(sizes.size());
  for (size_t p = 0; p < order.size(); ++p) order[p] = p;
  std::shuffle(order.begin(), order.end(), rng);
  size_t at = rng() % 4;
  for (size_t p : order) displs[p] = at, at += sizes[p] + rng() % 6;
  *extent = at;
  return displs;
}

std::string alltoallvRound(CaseRunner& runner, int n, std::mt19937_64& rng, const test::Pattern& pattern, int source,
                           bool inPlace) {
  auto type = static_cast<myrDataType_t>(rng() % test::kNumDataTypes);
  size_t es = test::dataTypeSize(type), nb = static_cast<size_t>(n);
  std::vector<std::vector<size_t>> counts(nb, std::vector<size_t>(nb));
  for (size_t a = 0; a < nb; ++a)
    for (size_t b = inPlace ? a : 0; b < nb; ++b)
      counts[a][b] = kCounts[rng() % 10], counts[b][a] = inPlace ? counts[a][b] : counts[b][a];
  std::vector<test::Guarded> send(nb), recv(nb);
  std::vector<CollArgs> args(nb);
  std::vector<std::vector<uint8_t>> input(nb);
  auto src = [&](size_t from, size_t to) { return source + static_cast<int>(from * nb + to); };
  for (size_t me = 0; me < nb; ++me) {
    CollArgs& a = args[me];
    a.kind = CollKind::kAllToAll, a.dtype = type;
    size_t sendExtent = 0, recvExtent = 0;
    a.sendCounts = counts[me], a.sendDispls = layOut(a.sendCounts, rng, &sendExtent);
    for (size_t p = 0; p < nb; ++p) a.recvCounts.push_back(counts[p][me]);
    a.recvDispls = inPlace ? a.sendDispls : layOut(a.recvCounts, rng, &recvExtent);
    send[me].resize(sendExtent * es), send[me].fillCanary();
    recv[me].resize(inPlace ? 0 : recvExtent * es), recv[me].fillCanary();
    for (size_t p = 0; p < nb; ++p)
      pattern.fill(send[me].data() + a.sendDispls[p] * es, counts[me][p] * es, src(me, p));
    input[me].assign(send[me].data(), send[me].data() + send[me].size());
    a.sendbuff = send[me].data(), a.recvbuff = inPlace ? send[me].data() : recv[me].data();
  }
  std::string err = runner.run(args);
  for (size_t me = 0; me < nb && err.empty(); ++me) {
    test::Guarded& out = inPlace ? send[me] : recv[me];
    const CollArgs& a = args[me];
    std::vector<size_t> order(nb);
    for (size_t p = 0; p < nb; ++p) order[p] = p;
    std::sort(order.begin(), order.end(), [&](size_t x, size_t y) { return a.recvDispls[x] < a.recvDispls[y]; });
    size_t at = 0;
    std::string who = "rank " + std::to_string(me);
    for (size_t p : order) {
      size_t begin = a.recvDispls[p] * es, bytes = a.recvCounts[p] * es;
      if (bytes == 0 || !err.empty()) continue;
      err = out.untouched(at, begin, who + " recvbuff gap");
      if (err.empty())
        err = pattern.check(out.data() + begin, bytes, src(p, me), 0, who + " segment from " + std::to_string(p) + ":");
      at = begin + bytes;
    }
    if (err.empty()) err = out.untouched(at, out.size(), who + " recvbuff tail gap");
    if (err.empty()) err = out.guardsIntact(who + " recvbuff");
    if (err.empty() && !inPlace) err = test::unchanged(send[me].data(), input[me], who + " sendbuff");
    if (err.empty() && !inPlace) err = send[me].guardsIntact(who + " sendbuff");
  }
  return err.empty() ? "" : std::string(test::dataTypeName(type)) + (inPlace ? " in place: " : ": ") + err;
}

struct Param {
  std::string algo;
  CollKind kind;
};

std::vector<Param> params() {
  std::vector<Param> out;
  for (CollKind k : {CollKind::kSendRecv, CollKind::kAllToAll}) {
    for (const Algorithm* a : algorithmsFor(k)) out.push_back({a->name(), k});
    out.push_back({kTuner, k});
  }
  return out;
}

std::string paramName(const ::testing::TestParamInfo<Param>& info) {
  std::string name = info.param.algo == kTuner ? std::string("tuner_") + collName(info.param.kind) : info.param.algo;
  std::replace(name.begin(), name.end(), '.', '_');
  return name + (info.param.kind == CollKind::kAllToAll ? "_v" : "");
}

class SimPerPeer : public ::testing::TestWithParam<Param> {};

TEST_P(SimPerPeer, EveryBlockFromItsSender) {
  const Param& p = GetParam();
  uint64_t seed = test::testSeed();
  test::Pattern pattern(seed);
  size_t calls = 0;
  for (const SimCase& c : simCasesFor(p.algo, p.kind)) {
    uint64_t cs = caseSeed(seed, c) ^ (p.kind == CollKind::kAllToAll ? 0x7f4a7c15ULL : 0);
    std::mt19937_64 rng(cs);
    CaseRunner runner(c, cs);
    int n = c.nranks, span = n * n + 3 * n + 2;
    std::string err;
    for (int k = 0; k < kRounds && err.empty(); ++k) {
      err = p.kind == CollKind::kSendRecv ? groupRound(runner, n, rng, pattern, k * span)
                                          : alltoallvRound(runner, n, rng, pattern, k * span, k % 3 == 2);
      if (!err.empty()) err = "round " + std::to_string(k) + ": " + err;
    }
    if (err.empty() && c.mustRun && runner.refused())
      err = c.algo + " must run every call here but refused " + std::to_string(runner.refused()) + ": " +
            runner.refusal();
    EXPECT_EQ(err, "") << c.describe() << ", " << replayHint(seed);
    if (err.empty()) std::cout << "[ outcome  ] " << c.describe() << ": " << runner.outcome() << "\n";
    calls += kRounds;
  }
  std::cout << "[ outcome  ] " << paramName({p, 0}) << ": " << calls << " calls, " << replayHint(seed) << "\n";
}

INSTANTIATE_TEST_SUITE_P(All, SimPerPeer, ::testing::ValuesIn(params()), paramName);

}  // namespace
}  // namespace myriad::sim
