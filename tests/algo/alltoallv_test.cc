// algo tier, all-to-allv: every registered alltoall.* algorithm (cases from harness.h) over seeded rounds,
// each with its own dtype (all 12 in turn) and per-pair counts drawn from {0, 1, 2, 13, 1009, ...} (about a
// third zeros, a 65537 in a few rounds), laid out in a shuffled peer order with gaps, on both sides. Gap bytes
// and guards must stay canary, sendbuff must stay as it was. In-place rounds use symmetric counts with
// sdispls == rdispls and sendbuff == recvbuff (MPI_IN_PLACE's meaning).
#include <gtest/gtest.h>

#include <algorithm>
#include <random>

#include "buffers.h"
#include "harness.h"
#include "tests/common/dtype_values.h"

namespace myriad::test {
namespace {

constexpr int kRounds = 24;

struct Round {
  myrDataType_t type;
  bool inPlace;
  std::vector<std::vector<size_t>> counts;   // counts[from][to], elements
  std::vector<std::vector<size_t>> sdispls;  // sdispls[rank][to]
  std::vector<std::vector<size_t>> rdispls;  // rdispls[rank][from]
  std::vector<size_t> sendExtent, recvExtent;
};

// Segments of `sizes` in a shuffled order with gaps of 0-5 elements; returns the displacements.
std::vector<size_t> layOut(const std::vector<size_t>& sizes, std::mt19937_64& rng, size_t* extent) {
  std::vector<int> order(sizes.size());
  for (size_t p = 0; p < order.size(); ++p) order[p] = static_cast<int>(p);
  std::shuffle(order.begin(), order.end(), rng);
  std::vector<size_t> displs(sizes.size());
  size_t at = rng() % 4;
  for (int p : order) displs[static_cast<size_t>(p)] = at, at += sizes[static_cast<size_t>(p)] + rng() % 6;
  *extent = at;
  return displs;
}

std::vector<Round> makeRounds(int n, uint64_t seed) {
  std::mt19937_64 rng(seed ^ static_cast<uint64_t>(n) * 0x2545f4914f6cdd1dULL);
  const size_t kChoices[] = {0, 0, 0, 1, 2, 13, 1009, 7, 0, 3};
  size_t nb = static_cast<size_t>(n);
  std::vector<Round> out;
  const int rounds = shortRun() ? kRounds / 2 : kRounds;  // MYRIAD_TEST_SHORT: every dtype once
  for (int k = 0; k < rounds; ++k) {
    Round r{static_cast<myrDataType_t>(k % kNumDataTypes), k % 3 == 2, {}, {}, {}, {}, {}};
    r.counts.assign(nb, std::vector<size_t>(nb));
    for (size_t a = 0; a < nb; ++a)
      for (size_t b = r.inPlace ? a : 0; b < nb; ++b) {
        size_t v = kChoices[rng() % std::size(kChoices)];
        if (k % 8 == 5 && rng() % 4 == 0) v = kPeriod;
        r.counts[a][b] = v;
        if (r.inPlace) r.counts[b][a] = v;
      }
    r.sendExtent.resize(nb), r.recvExtent.resize(nb);
    for (size_t me = 0; me < nb; ++me) {
      std::vector<size_t> from(nb);
      for (size_t p = 0; p < nb; ++p) from[p] = r.counts[p][me];
      r.sdispls.push_back(layOut(r.counts[me], rng, &r.sendExtent[me]));
      if (r.inPlace) {
        r.rdispls.push_back(r.sdispls.back()), r.recvExtent[me] = r.sendExtent[me];
        continue;
      }
      r.rdispls.push_back(layOut(from, rng, &r.recvExtent[me]));
    }
    out.push_back(std::move(r));
  }
  return out;
}

std::string list(const std::vector<size_t>& v) {
  std::string out;
  for (size_t x : v) out += (out.empty() ? "" : ",") + std::to_string(x);
  return out;
}

// This rank's arguments, for failure messages.
std::string layoutText(const CollArgs& a) {
  return "sendcounts " + list(a.sendCounts) + " sdispls " + list(a.sendDispls) + " recvcounts " + list(a.recvCounts) +
         " rdispls " + list(a.recvDispls);
}

std::string runRound(RankCtx& ctx, const Round& r, int call, const Pattern& pattern) {
  size_t n = static_cast<size_t>(ctx.nranks()), me = static_cast<size_t>(ctx.rank()), es = dataTypeSize(r.type);
  Guarded send(r.sendExtent[me] * es), recv(r.inPlace ? 0 : r.recvExtent[me] * es);
  send.fillCanary(), recv.fillCanary();
  std::vector<size_t> recvCounts(n);
  for (size_t p = 0; p < n; ++p) {
    recvCounts[p] = r.counts[p][me];
    pattern.fill(send.data() + r.sdispls[me][p] * es, r.counts[me][p] * es, call + static_cast<int>(me * n + p));
  }
  std::vector<uint8_t> input(send.data(), send.data() + send.size());
  Guarded& out = r.inPlace ? send : recv;
  CollArgs args = collArgs(CollKind::kAllToAll, send.data(), out.data(), 0, r.type);
  args.sendCounts = r.counts[me], args.sendDispls = r.sdispls[me];
  args.recvCounts = recvCounts, args.recvDispls = r.rdispls[me];
  std::string err = ctx.call(args, [&](myrComm_t comm) {
    return myrAllToAllv(send.data(), args.sendCounts.data(), args.sendDispls.data(), out.data(), args.recvCounts.data(),
                        args.recvDispls.data(), r.type, comm, nullptr);
  });
  // Walk recvbuff in displacement order: each segment holds its sender's data, every gap is canary.
  std::vector<size_t> order(n);
  for (size_t p = 0; p < n; ++p) order[p] = p;
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) { return r.rdispls[me][a] < r.rdispls[me][b]; });
  size_t at = 0;
  for (size_t p : order) {
    size_t begin = r.rdispls[me][p] * es, bytes = recvCounts[p] * es;
    if (bytes == 0) continue;  // an empty segment's displacement may point anywhere
    if (err.empty()) err = out.untouched(at, begin, "recvbuff gap");
    if (err.empty())
      err = pattern.check(out.data() + begin, bytes, call + static_cast<int>(p * n + me), 0,
                          "segment from rank " + std::to_string(p) + ":");
    at = begin + bytes;
  }
  if (err.empty()) err = out.untouched(at, out.size(), "recvbuff tail gap");
  if (err.empty()) err = out.guardsIntact("recvbuff");
  if (err.empty() && !r.inPlace) err = unchanged(send.data(), input, "sendbuff");
  if (err.empty() && !r.inPlace) err = send.guardsIntact("sendbuff");
  return err.empty() ? err : err + " [" + layoutText(args) + "]";
}

class AllToAllvAlgo : public ::testing::TestWithParam<Case> {};

TEST_P(AllToAllvAlgo, EverySegmentFromItsSender) {
  const Case& c = GetParam();
  uint64_t seed = testSeed();
  auto rounds = makeRounds(c.nranks, seed);
  Pattern pattern(seed);
  runCase(c, seed, [&](RankCtx& ctx) {
    for (size_t k = 0; k < rounds.size(); ++k) {
      std::string err = runRound(ctx, rounds[k], static_cast<int>(k) * c.nranks * c.nranks, pattern);
      if (!err.empty())
        return "round " + std::to_string(k) + " (" + dataTypeName(rounds[k].type) +
               (rounds[k].inPlace ? ", in place" : "") + "): " + err;
    }
    return std::string();
  });
}

INSTANTIATE_TEST_SUITE_P(All, AllToAllvAlgo, ::testing::ValuesIn(casesFor(CollKind::kAllToAll)), caseName);

}  // namespace
}  // namespace myriad::test
