// Cases from the registry, the forced-or-refused call, runCase and the combination lists. supports() is
// asked through the library's internal Comm, so the test knows which of the two outcomes a call must have.
#include "harness.h"

#include <algorithm>
#include <cstdlib>
#include <iostream>
#include <random>
#include <sstream>

#include "buffers.h"
#include "capi/handles.h"
#include "dispatch/registry.h"
#include "run_ranks.h"
#include "tests/common/dtype_values.h"

namespace myriad::test {
namespace {

bool isHier(const std::string& algo) {
  return algo.size() > 5 && algo.compare(algo.size() - 5, 5, ".hier") == 0;
}

Layout makeLayout(bool interleaved, const std::vector<int>& sizes) {
  Layout l{interleaved ? "interleaved" : "blocked", interleaved ? interleavedHosts(sizes) : blockedHosts(sizes)};
  for (int s : sizes) l.name += "_" + std::to_string(s);
  return l;
}

std::vector<Layout> hierLayouts() {
  return {makeLayout(false, {1, 1}),    makeLayout(false, {2, 2}),    makeLayout(false, {4, 4}),
          makeLayout(false, {2, 2, 2}), makeLayout(false, {4, 4, 4}), makeLayout(false, {3, 1}),
          makeLayout(false, {1, 4, 2}), makeLayout(false, {2, 3}),    makeLayout(true, {2, 2}),
          makeLayout(true, {3, 3, 3}),  makeLayout(true, {3, 2}),     makeLayout(true, {4, 3, 1}),
          makeLayout(true, {1, 2, 2}),  makeLayout(false, {3, 3, 1}), makeLayout(true, {3, 3, 1}),
          makeLayout(false, {2, 2, 1}), makeLayout(true, {2, 2, 1}),  makeLayout(false, {4, 1}),
          makeLayout(true, {4, 1}),     makeLayout(false, {1, 1, 1})};
}

// Flat algorithms across hosts too (tcp between them, shm inside): one even, one uneven interleaved.
std::vector<Layout> flatMultiHostLayouts() {
  return {makeLayout(false, {4, 4}), makeLayout(true, {3, 2})};
}

}  // namespace

void PrintTo(const Case& c, std::ostream* os) {
  *os << c.algo << " with " << c.nranks << " ranks, " << c.layout.name;
}

std::string caseName(const ::testing::TestParamInfo<Case>& info) {
  std::string name = info.param.algo + "_n" + std::to_string(info.param.nranks) + "_" + info.param.layout.name;
  for (char& ch : name)
    if (ch == '.') ch = '_';
  return name;
}

bool shortRun() {
  static const bool kShort = [] {
    const char* env = std::getenv("MYRIAD_TEST_SHORT");
    return env != nullptr && *env != '\0' && std::string(env) != "0";
  }();
  return kShort;
}

std::vector<Case> casesFor(CollKind kind, const std::vector<int>& flatRanks) {
  const bool quick = shortRun();
  std::vector<int> ranks;
  for (int n : flatRanks)
    if (!quick || n == 1 || n == 2 || n == 3 || n == 5 || n == 8) ranks.push_back(n);
  const std::vector<Layout> hierShort{makeLayout(false, {2, 2}), makeLayout(false, {3, 1}),
                                      makeLayout(false, {2, 2, 2}), makeLayout(true, {3, 2})};
  const std::vector<Layout> flatShort{makeLayout(true, {3, 2})};
  std::vector<Case> out;
  for (const Algorithm* a : algorithmsFor(kind)) {
    std::string name = a->name();
    bool hier = isHier(name);
    for (int n : ranks) out.push_back({name, n, Layout{"1host", {}}, true});
    for (const Layout& l : hier ? (quick ? hierShort : hierLayouts()) : (quick ? flatShort : flatMultiHostLayouts()))
      out.push_back({name, static_cast<int>(l.hostOf.size()), l, true});
    Layout small = hier ? makeLayout(false, {2, 2, 2}) : Layout{"1host", {}};
    small.name += "_chunk1k";
    out.push_back({name, hier ? 6 : 5, small, true, 1024});
    if (hier && !quick) {  // a 1-rank host on every rail, its lanes' slices interleaved on one link
      Layout uneven = makeLayout(true, {4, 1});
      uneven.name += "_chunk1k";
      out.push_back({name, 5, uneven, true, 1024});
    }
  }
  // Nothing forced: the tuner mixes algorithms by size on one communicator, on even and uneven hosts.
  if (quick) {
    out.push_back({kTunerCase, 3, Layout{"1host", {}}, false});
    Layout l = makeLayout(true, {3, 3});
    out.push_back({kTunerCase, static_cast<int>(l.hostOf.size()), l, false});
    return out;
  }
  for (int n : {3, 16}) out.push_back({kTunerCase, n, Layout{"1host", {}}, false});
  for (const Layout& l : {makeLayout(false, {4, 4}), makeLayout(true, {3, 3}), makeLayout(false, {3, 1, 2})})
    out.push_back({kTunerCase, static_cast<int>(l.hostOf.size()), l, false});
  return out;
}

uint64_t testSeed() {
  static const uint64_t kSeed = [] {
    const char* env = std::getenv("MYRIAD_TEST_SEED");
    if (env && *env) return static_cast<uint64_t>(std::strtoull(env, nullptr, 10));
    std::random_device rd;
    return (static_cast<uint64_t>(rd()) << 32 | rd()) % 1000000000;
  }();
  return kSeed;
}

CollArgs collArgs(CollKind kind, const void* send, void* recv, size_t count, myrDataType_t type, myrRedOp_t op,
                  int root) {
  CollArgs a;
  a.kind = kind, a.sendbuff = send, a.recvbuff = recv, a.count = count, a.dtype = type, a.op = op, a.root = root;
  return a;
}

std::string callError(myrResult_t rc, myrComm_t comm) {
  return std::string(myrGetErrorString(rc)) + ": " + myrGetLastError(comm);
}

RankCtx::RankCtx(int rank, int nranks, myrComm_t forced, myrComm_t tuned, const std::string& algo)
    : rank_(rank), nranks_(nranks), forced_(forced), tuned_(tuned), algo_(findAlgorithm(algo)) {}

std::string RankCtx::call(const CollArgs& args, const std::function<myrResult_t(myrComm_t)>& issue) {
  if (!algo_) {  // the "tuner" case: nothing forced, every call on the tuner's choice
    ++tunedCalls_;
    myrResult_t rc = issue(tuned_);
    return rc == myrSuccess ? "" : "tuner's choice: " + callError(rc, tuned_);
  }
  Status why = algo_->supports(args, forced_->impl->view());
  myrResult_t rc = issue(forced_);
  if (why.isOk()) {
    ++forcedCalls_;
    return rc == myrSuccess ? "" : std::string("forced ") + algo_->name() + ": " + callError(rc, forced_);
  }
  if (rc != myrInvalidUsage)
    return std::string(algo_->name()) + " does not support the call (" + why.message() + ") but forcing it returned " +
           (rc == myrSuccess ? "success" : callError(rc, forced_)) + " instead of invalid usage";
  ++tunedCalls_;
  refusal_ = why.message();
  rc = issue(tuned_);
  return rc == myrSuccess
             ? ""
             : "tuner's choice (after " + std::string(algo_->name()) + " refused): " + callError(rc, tuned_);
}

void runCase(const Case& c, uint64_t seed, const std::function<std::string(RankCtx&)>& body) {
  std::vector<RankCtx> ctx(static_cast<size_t>(c.nranks), RankCtx(0, 0, nullptr, nullptr, c.algo));
  auto results = runRankPairs(
      c.nranks,
      [&](int rank, myrComm_t forced, myrComm_t tuned) {
        RankCtx& mine = ctx[static_cast<size_t>(rank)];
        mine = RankCtx(rank, c.nranks, forced, tuned, c.algo);
        return body(mine);
      },
      RunOptions{c.algo == kTunerCase ? "" : c.algo, c.layout.hostOf, c.chunkBytes});
  std::ostringstream where;
  where << c.algo << " with " << c.nranks << " ranks (" << c.layout.name << "), seed " << seed
        << " (rerun with MYRIAD_TEST_SEED=" << seed << ")";
  for (const auto& r : results) EXPECT_EQ(r.error, "") << "rank " << r.rank << " of " << where.str();
  const RankCtx& first = ctx[0];
  for (const RankCtx& r : ctx) {
    EXPECT_EQ(r.forcedCalls(), first.forcedCalls()) << "rank " << r.rank() << " and rank 0 disagree, " << where.str();
    EXPECT_EQ(r.tunedCalls(), first.tunedCalls()) << "rank " << r.rank() << " and rank 0 disagree, " << where.str();
  }
  if (c.mustRun) {
    EXPECT_EQ(first.tunedCalls(), 0) << c.algo << " must run every call here but refused " << first.tunedCalls() << ": "
                                     << first.refusal() << "; " << where.str();
  }
  std::cout << "[ outcome  ] " << where.str() << ": ";
  if (c.algo == kTunerCase) {
    std::cout << first.tunedCalls() << " calls, nothing forced\n";
    return;
  }
  std::cout << first.forcedCalls() << " calls forced, " << first.tunedCalls() << " refused"
            << (first.tunedCalls() ? " (" + first.refusal() + ") and checked on the tuner's choice" : "") << "\n";
}

std::vector<Combo> makeCombos(int n, uint64_t seed, const ComboOptions& options) {
  std::mt19937_64 rng(seed * 0x9e3779b97f4a7c15ULL + static_cast<uint64_t>(n));
  const bool quick = shortRun();
  std::vector<size_t> counts{0};
  if (!quick) counts.push_back(1);
  for (size_t c : {static_cast<size_t>(n - 1), size_t{13}, size_t{1009}})
    if (std::find(counts.begin(), counts.end(), c) == counts.end()) counts.push_back(c);
  int ops = options.reduces ? kNumRedOps : 1;
  std::vector<Combo> out;
  auto add = [&](size_t count, int t, int o) {
    Combo c{count, static_cast<myrDataType_t>(t), static_cast<myrRedOp_t>(o), 0, rng()};
    c.root = static_cast<int>((out.size() + seed) % static_cast<size_t>(n));
    out.push_back(c);
  };
  for (size_t count : counts)
    for (int t = 0; t < kNumDataTypes; ++t) {
      if (quick && count != 13) {
        add(count, t, t % ops);  // one op per dtype, in turn
        continue;
      }
      for (int o = 0; o < ops; ++o) add(count, t, o);
    }
  auto randomType = [&] { return static_cast<int>(rng() % kNumDataTypes); };
  auto randomOp = [&] { return static_cast<int>(rng() % static_cast<uint64_t>(ops)); };
  add(kPeriod, randomType(), randomOp());
  if (quick) {
    add(kPeriod, myrFloat32, myrSum);
    return out;
  }
  add(options.large, myrFloat32, myrSum);
  for (int k = 0; k < 2; ++k) add(options.large, randomType(), randomOp());
  return out;
}

std::string describe(const Combo& c, bool reduces, bool rooted) {
  std::ostringstream os;
  os << "count " << c.count << " " << dataTypeName(c.type);
  if (reduces) os << " " << redOpName(c.op);
  if (rooted) os << " root " << c.root;
  return os.str();
}

}  // namespace myriad::test
