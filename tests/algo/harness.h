// The algo tier's shared frame: which (algorithm, ranks, hosts) cases run, taken from the registry so a new
// algorithm is covered without touching the tests; how a call is forced onto the case's algorithm, or, when
// the algorithm's supports() refuses it, checked to be refused and rerun on the tuner's choice; the seed.
// Invariant: every call ends up either forced or refused-and-rerun, counted, never silently skipped.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <functional>
#include <ostream>
#include <string>
#include <vector>

#include "algorithms/algorithm.h"
#include "myriad/myriad.h"

namespace myriad::test {

struct Layout {
  std::string name;         // "1host", "blocked_2_2", "interleaved_3_2"
  std::vector<int> hostOf;  // empty: every rank on one host
};

struct Case {
  std::string algo;
  int nranks = 1;
  Layout layout;
  // The forced algorithm must run every call: true for every registered algorithm on every layout (the
  // hierarchical ones too, on hosts of any sizes); false only for the "tuner" cases, which force nothing.
  // A call supports() refuses is still checked to be refused and rerun on the tuner's choice.
  bool mustRun = true;
  size_t chunkBytes = 0;  // 0: the default; else a small MYRIAD_CHUNK_BYTES, so small counts span many slices
};
void PrintTo(const Case& c, std::ostream* os);
std::string caseName(const ::testing::TestParamInfo<Case>& info);

// Every registered algorithm of `kind` on one host with each of `flatRanks` ranks; flat algorithms also on
// 2 hosts (4+4 blocked, 3+2 interleaved), *.hier ones on 20 layouts of 2 and 3 hosts with 1-4 ranks each,
// even and uneven (3+3+1, 2+2+1, 4+1, 1+1+1, 1+4+2, ...), blocked and interleaved; each algorithm once more
// with 1 KiB chunks (5 ranks on one host, hierarchical ones on 2+2+2 and on 4+1 interleaved); and "tuner"
// cases, unforced, on one host and on 2 and 3 hosts.
// The algo name of cases that force nothing (runRankPairs with an empty MYRIAD_ALGO on both communicators).
inline constexpr const char* kTunerCase = "tuner";

// With MYRIAD_TEST_SHORT=1 (the sanitizer runs of scripts/test) a reduced but real list: flat ranks only those
// of {1, 2, 3, 5, 8} in `flatRanks`, flat algorithms across hosts on 3+2 interleaved only, *.hier ones on 4
// layouts (2+2, 3+1, 2+2+2 blocked; 3+2 interleaved), the 1 KiB chunk case, and tuner cases on 3 ranks and on
// 3+3 interleaved.
std::vector<Case> casesFor(CollKind kind, const std::vector<int>& flatRanks = {1, 2, 3, 4, 5, 6, 7, 8, 16});

// MYRIAD_TEST_SHORT=1: fewer cases (casesFor) and combinations (makeCombos), for the sanitizer builds.
bool shortRun();

// MYRIAD_TEST_SEED when set, else random; the same for the whole process.
uint64_t testSeed();

// One rank's side of a case: both communicators and the per-call forcing logic.
class RankCtx {
 public:
  RankCtx(int rank, int nranks, myrComm_t forced, myrComm_t tuned, const std::string& algo);
  int rank() const { return rank_; }
  int nranks() const { return nranks_; }
  // Issues a call described by `args` through `issue(comm)`: on the forced communicator when the algorithm
  // supports it (and then it must succeed); otherwise the forced call must fail with myrInvalidUsage and
  // the call is issued again on the tuned communicator, where it must succeed. "" or what went wrong.
  std::string call(const CollArgs& args, const std::function<myrResult_t(myrComm_t)>& issue);
  int forcedCalls() const { return forcedCalls_; }
  int tunedCalls() const { return tunedCalls_; }
  const std::string& refusal() const { return refusal_; }

 private:
  int rank_, nranks_;
  myrComm_t forced_, tuned_;
  const Algorithm* algo_;
  int forcedCalls_ = 0, tunedCalls_ = 0;
  std::string refusal_;
};

// Runs body on every rank of the case; expects every rank to succeed (a failure names the rank, the case
// and the seed), the ranks to agree on what was forced, and no refusal where c.mustRun. Prints the outcome.
void runCase(const Case& c, uint64_t seed, const std::function<std::string(RankCtx&)>& body);

// Combinations of a case: count, element type, op and root (rotated over the list, so every root meets
// several counts and types). See makeCombos for the pruning.
struct Combo {
  size_t count = 0;
  myrDataType_t type = myrFloat32;
  myrRedOp_t op = myrSum;
  int root = 0;
  uint64_t salt = 0;
};
struct ComboOptions {
  bool reduces = false;  // every op, else op stays myrSum
  size_t large = size_t{1} << 20;
};
// Every dtype (x every op) at counts {0, 1, n-1, 13, 1009}; at 65537 one seeded random dtype (and op); at
// `large` float32 (sum) and two seeded random dtypes (and ops). Duplicate counts (n-1 in {0, 1}) drop out.
// shortRun(): every dtype at counts {0, n-1, 13, 1009}, every op only at 13 (elsewhere one op per dtype, in
// turn); at 65537 one seeded random dtype (and op) and float32 (sum); nothing larger.
std::vector<Combo> makeCombos(int n, uint64_t seed, const ComboOptions& options);
// "count 13 float sum root 2 (salt 77)" for messages.
std::string describe(const Combo& c, bool reduces, bool rooted);

// The CollArgs a C call builds, for asking supports() (all-to-allv and groups add their vectors).
CollArgs collArgs(CollKind kind, const void* send, void* recv, size_t count, myrDataType_t type, myrRedOp_t op = myrSum,
                  int root = 0);

// "myrInvalidUsage: <last error>" style text for a failed call.
std::string callError(myrResult_t rc, myrComm_t comm);

}  // namespace myriad::test
