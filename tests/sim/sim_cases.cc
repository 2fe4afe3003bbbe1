// Cases from the registry, case seeds and executor knobs, and CaseRunner: supports() on every rank, the
// forced-or-refused rule, planning with each rank's CommView, and the run.
#include "sim_cases.h"

#include <algorithm>
#include <random>

#include "dispatch/registry.h"
#include "dispatch/select.h"
#include "tests/algo/run_ranks.h"

namespace myriad::sim {
namespace {

bool isHier(const std::string& algo) {
  return algo.size() > 5 && algo.compare(algo.size() - 5, 5, ".hier") == 0;
}

SimCase layoutCase(const std::string& algo, bool interleaved, const std::vector<int>& sizes, bool hier) {
  SimCase c;
  c.algo = algo;
  c.hostOf = interleaved ? test::interleavedHosts(sizes) : test::blockedHosts(sizes);
  c.nranks = static_cast<int>(c.hostOf.size());
  c.layoutName = interleaved ? "interleaved" : "blocked";
  bool even = true;
  for (int s : sizes) c.layoutName += "_" + std::to_string(s), even = even && s == sizes[0];
  c.mustRun = !hier || even;
  return c;
}

uint64_t fnv(uint64_t h, const std::string& s) {
  for (unsigned char ch : s) h = (h ^ ch) * 1099511628211ULL;
  return h;
}

}  // namespace

std::string SimCase::describe() const {
  return algo + " with " + std::to_string(nranks) + " ranks (" + layoutName +
         (chunkBytes ? ", " + std::to_string(chunkBytes) + " B chunks" : "") + ")";
}

std::vector<MatrixParam> matrixParams() {
  std::vector<MatrixParam> out;
  for (const Algorithm* a : allAlgorithms())
    if (a->kind() != CollKind::kSendRecv) out.push_back({a->name(), a->kind()});
  for (CollKind k :
       {CollKind::kAllReduce, CollKind::kBroadcast, CollKind::kReduce, CollKind::kAllGather, CollKind::kReduceScatter,
        CollKind::kAllToAll, CollKind::kGather, CollKind::kScatter, CollKind::kBarrier})
    out.push_back({kTuner, k});
  return out;
}

std::string matrixParamName(const MatrixParam& p) {
  std::string name = p.algo == kTuner ? std::string("tuner_") + collName(p.kind) : p.algo;
  for (char& ch : name)
    if (ch == '.') ch = '_';
  return name;
}

const std::vector<int>& simRanks() {
  static const std::vector<int> kRanks{1, 2, 3, 4, 5, 6, 7, 8, 16, 33};
  return kRanks;
}

std::vector<SimCase> simCasesFor(const std::string& algo, CollKind kind) {
  (void)kind;
  bool hier = isHier(algo), tuner = algo == kTuner;
  std::vector<SimCase> out;
  for (int n : simRanks()) out.push_back({algo, n, "1host", {}, !tuner, 0});
  out.push_back(layoutCase(algo, false, {4, 4}, hier));
  out.push_back(layoutCase(algo, true, {3, 3, 3}, hier));
  out.push_back(layoutCase(algo, true, {3, 2}, hier));
  out.push_back(layoutCase(algo, false, {1, 4, 2}, hier));
  if (hier) {
    out.push_back(layoutCase(algo, false, {1, 1}, hier));
    out.push_back(layoutCase(algo, true, {2, 2}, hier));
    out.push_back(layoutCase(algo, false, {3, 1}, hier));
    out.push_back(layoutCase(algo, true, {4, 3, 1}, hier));
  }
  // Small chunks, so that counts of 13-1009 elements are cut into many slices and pipelines fill up.
  for (size_t chunk : {size_t{64}, size_t{1024}}) {
    SimCase small =
        hier ? layoutCase(algo, chunk == 64, chunk == 64 ? std::vector<int>{2, 2, 2} : std::vector<int>{3, 3}, hier)
             : SimCase{algo, chunk == 64 ? 5 : 7, "1host", {}, true, 0};
    small.chunkBytes = chunk;
    out.push_back(small);
  }
  for (SimCase& c : out) c.mustRun = c.mustRun && !tuner;
  return out;
}

uint64_t caseSeed(uint64_t testSeed, const SimCase& c) {
  uint64_t h = fnv(1469598103934665603ULL ^ testSeed, c.algo + "/" + c.layoutName);
  h = (h ^ static_cast<uint64_t>(c.nranks)) * 1099511628211ULL;
  return (h ^ c.chunkBytes) * 1099511628211ULL;
}

SimOptions simOptions(uint64_t seed) {
  std::mt19937_64 rng(seed);
  auto pick = [&](std::initializer_list<int> v) { return *(v.begin() + rng() % v.size()); };
  SimOptions o;
  o.seed = seed;
  o.maxDelay = pick({0, 1, 3, 8});
  o.rendezvousPercent = pick({0, 50, 100});
  o.combinePercent = pick({0, 50, 100});
  o.skipPercent = pick({0, 10, 30});
  o.maxStartDelay = pick({0, 2, 5});
  return o;
}

std::string replayHint(uint64_t testSeed) {
  return "seed " + std::to_string(testSeed) + " (rerun with MYRIAD_TEST_SEED=" + std::to_string(testSeed) + ")";
}

CaseRunner::CaseRunner(const SimCase& c, uint64_t seed, const RunnerFactory& factory)
    : c_(c),
      algo_(c.algo == kTuner ? nullptr : findAlgorithm(c.algo)),
      exec_(factory ? factory(c, seed) : std::make_unique<DeterministicExecutor>(c.nranks, simOptions(seed))) {
  auto layout = c.hostOf.empty() ? HostLayout::single(c.nranks) : HostLayout::fromHostOf(c.hostOf);
  for (int r = 0; r < c.nranks; ++r) {
    CommView v{r, layout};
    if (c.chunkBytes) v.chunkBytes = c.chunkBytes;
    views_.push_back(v);
  }
}

std::string CaseRunner::plan(const Algorithm* algo, std::vector<CollArgs>& args, std::vector<RankCall>* calls) {
  std::string chosen;
  for (size_t r = 0; r < args.size(); ++r) {
    const Algorithm* a = algo;
    if (!a) {
      auto sel = selectAlgorithm(args[r], views_[r], "");
      if (!sel.isOk()) return "rank " + std::to_string(r) + ": the tuner chose nothing: " + sel.status().toString();
      a = sel.value();
      if (r == 0) chosen = a->name();
      if (chosen != a->name())
        return "rank " + std::to_string(r) + "'s tuner chose " + a->name() + ", rank 0's " + chosen;
    }
    auto p = a->plan(args[r], views_[r]);
    if (!p.isOk()) return "rank " + std::to_string(r) + ": " + a->name() + " failed to plan: " + p.status().toString();
    calls->push_back({p.take(), args[r]});
  }
  return "";
}

std::string CaseRunner::run(std::vector<CollArgs>& args, RunStats* stats) {
  std::vector<RankCall> calls;
  std::string err;
  if (!algo_) {
    ++tuned_;
    err = plan(nullptr, args, &calls);
  } else {
    Status why = algo_->supports(args[0], views_[0]);
    for (size_t r = 1; r < args.size(); ++r) {
      Status w = algo_->supports(args[r], views_[r]);
      if (w.isOk() != why.isOk())
        return std::string(algo_->name()) + ": rank " + std::to_string(r) + " says " +
               (w.isOk() ? "supported" : w.message()) + ", rank 0 " + (why.isOk() ? "supported" : why.message());
    }
    if (why.isOk()) {
      ++forced_;
      err = plan(algo_, args, &calls);
    } else {
      for (size_t r = 0; r < args.size(); ++r) {
        auto sel = selectAlgorithm(args[r], views_[r], algo_->name());
        if (sel.isOk() || sel.status().code() != Code::kInvalidUsage)
          return std::string(algo_->name()) + " refuses the call (" + why.message() + ") but forcing it on rank " +
                 std::to_string(r) + " gave " + (sel.isOk() ? "an algorithm" : sel.status().toString());
      }
      ++refused_;
      refusal_ = why.message();
      err = plan(nullptr, args, &calls);
    }
  }
  if (!err.empty()) return err;
  Status s = exec_->run(calls, stats);
  return s.isOk() ? "" : s.toString();
}

std::string CaseRunner::outcome() const {
  if (!algo_) return std::to_string(tuned_) + " calls on the tuner's choice";
  return std::to_string(forced_) + " calls forced, " + std::to_string(refused_) + " refused" +
         (refused_ ? " (" + refusal_ + ") and run on the tuner's choice" : "");
}

// Runs `combos` on one case; "" or the first failure.
std::string runCombos(const SimCase& c, CollKind kind, const std::vector<SimCombo>& combos, uint64_t seed,
                      const test::Pattern& pattern, std::string* outcome, const RunnerFactory& factory) {
  CaseRunner runner(c, caseSeed(seed, c), factory);
  int n = c.nranks;
  for (size_t i = 0; i < combos.size(); ++i) {
    SimCall call(kind, combos[i], n, pattern, static_cast<int>(i) * (n * n + n));
    RunStats stats;
    std::string err = runner.run(call.args(), &stats);
    for (int r = 0; r < n && err.empty(); ++r) {
      err = call.check(r);
      if (!err.empty()) err = "rank " + std::to_string(r) + ": " + err;
    }
    // Nobody leaves a barrier before the last rank has entered it.
    if (err.empty() && kind == CollKind::kBarrier && n > 1 && stats.started.size() == static_cast<size_t>(n)) {
      uint64_t lastStart = *std::max_element(stats.started.begin(), stats.started.end());
      for (int r = 0; r < n && err.empty(); ++r)
        if (stats.finished[static_cast<size_t>(r)] < lastStart)
          err = "rank " + std::to_string(r) + " left the barrier in round " +
                std::to_string(stats.finished[static_cast<size_t>(r)]) + ", before the last rank entered (round " +
                std::to_string(lastStart) + ")";
    }
    if (!err.empty()) return "call " + std::to_string(i) + " (" + describe(combos[i], kind) + "): " + err;
  }
  if (c.mustRun && runner.refused())
    return c.algo + " must run every call here but refused " + std::to_string(runner.refused()) + ": " +
           runner.refusal();
  *outcome = std::to_string(combos.size()) + " calls: " + runner.outcome();
  return "";
}

}  // namespace myriad::sim
