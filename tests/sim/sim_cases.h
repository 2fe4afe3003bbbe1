// The sim tier's cases, taken from the registry so a new algorithm is covered without touching the tests:
// (algorithm or "tuner", ranks, host layout, chunk size); and CaseRunner, which plans one call on every rank
// (each rank's own CommView) and runs it on a DeterministicExecutor. Invariant: a call either runs on the
// case's algorithm, or that algorithm's supports() refuses it on every rank alike — then forcing it must be
// refused as MYRIAD_ALGO would be, and the call runs on the tuner's choice; refusals are counted, never
// silently skipped, and a case that must run refuses nothing.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "algorithms/algorithm.h"
#include "tests/algo/buffers.h"
#include "tests/sim/det_executor.h"
#include "tests/sim/sim_call.h"

namespace myriad::sim {

inline constexpr const char* kTuner = "tuner";

struct SimCase {
  std::string algo;  // a registry name, or kTuner: every call on selectAlgorithm's choice
  int nranks = 1;
  std::string layoutName = "1host";
  std::vector<int> hostOf;  // empty: one host
  bool mustRun = true;      // flat algorithms everywhere, hierarchical ones on even hosts
  size_t chunkBytes = 0;    // 0: the default
  bool singleHost() const { return hostOf.empty(); }
  std::string describe() const;
};

// One test of a matrix tier (sim, device): a registered algorithm, or the tuner's choice for a collective.
struct MatrixParam {
  std::string algo;  // registry name or kTuner
  CollKind kind;
};
// Every registered algorithm but the point-to-point ones (groups: sim_p2p_test.cc), then the tuner per collective.
std::vector<MatrixParam> matrixParams();
// "allreduce_ring", "tuner_allreduce": a gtest-safe name.
std::string matrixParamName(const MatrixParam& p);

// The single-host rank counts of the matrix.
const std::vector<int>& simRanks();
// For every algorithm of `kind` (and the tuner): simRanks() on one host; two even and two uneven multi-host
// layouts (hierarchical algorithms four more); two cases with small chunks (64 B and 1 KiB).
std::vector<SimCase> simCasesFor(const std::string& algo, CollKind kind);

// A seed for one case, from the test seed and the case's identity (not its position), so that a case
// replays alike whichever tests run with it.
uint64_t caseSeed(uint64_t testSeed, const SimCase& c);
// The executor's knobs drawn from the case seed: delays, share of rendezvous pairs and combining ones.
SimOptions simOptions(uint64_t seed);
// "seed S (rerun with MYRIAD_TEST_SEED=S)"
std::string replayHint(uint64_t testSeed);

// Makes the runner of one case (nranks, case seed); null: the deterministic executor.
using RunnerFactory = std::function<std::unique_ptr<CallRunner>(const SimCase& c, uint64_t seed)>;

class CaseRunner {
 public:
  CaseRunner(const SimCase& c, uint64_t seed, const RunnerFactory& factory = nullptr);
  // Plans args[r] on every rank r and runs the call; "" or what went wrong (the rank, the step, the peer).
  std::string run(std::vector<CollArgs>& args, RunStats* stats = nullptr);
  int forced() const { return forced_; }
  int refused() const { return refused_; }
  int tuned() const { return tuned_; }
  const std::string& refusal() const { return refusal_; }
  // "12 calls forced, 3 refused (why) and run on the tuner's choice"
  std::string outcome() const;

 private:
  std::string plan(const Algorithm* algo, std::vector<CollArgs>& args, std::vector<RankCall>* calls);

  SimCase c_;
  const Algorithm* algo_;
  std::vector<CommView> views_;
  std::unique_ptr<CallRunner> exec_;
  int forced_ = 0, refused_ = 0, tuned_ = 0;
  std::string refusal_;
};

// Runs `combos` on one case, one CaseRunner for all of them (message tags carry on from call to call, as
// on a communicator), checking every rank after every call and, for barriers, that no rank leaves before
// the last one entered. "" or the first failure (call, combination, rank); *outcome: what ran.
// The barrier check needs the deterministic executor's rounds: a runner that leaves RunStats empty skips it.
std::string runCombos(const SimCase& c, CollKind kind, const std::vector<SimCombo>& combos, uint64_t seed,
                      const test::Pattern& pattern, std::string* outcome, const RunnerFactory& factory = nullptr);

}  // namespace myriad::sim
