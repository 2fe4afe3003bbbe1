// Planning one collective call for every rank, as the library would: the same CollArgs, the tuner's choice
// through selectAlgorithm (or a forced algorithm), the algorithm's own plan per rank. Buffers are stand-in
// addresses that are never dereferenced; only sizes matter. Ranks are planned one at a time and each plan is
// kept only in its shared, compact form (PlanSet), so planning holds one Schedule at a time.
#pragma once

#include <cstddef>
#include <functional>
#include <string>
#include <vector>

#include "base/status.h"
#include "plan/coll_args.h"
#include "plan/schedule.h"
#include "tools/sim/plan_set.h"

namespace myriad::netsim {

struct CallSpec {
  CollKind kind = CollKind::kAllReduce;
  size_t bytes = 0;  // as the perf binaries count it: all-gather and reduce-scatter the whole buffer,
                     // all-to-all everything one rank sends, the others one rank's buffer
  int nranks = 1;
  int ranksPerHost = 1;
  std::string algo;  // empty: the tuner chooses
};

struct PlannedCall {
  std::string algorithm;
  PlanSet plans;  // every rank's plan, compacted as it is made (each Schedule is dropped once added)
  // Ranks planned (a Schedule made and compacted), moved from their class's first rank (planClass), and
  // moved and then also planned to check the class's claim.
  int planned = 0, moved = 0, checked = 0;
};

// "all_reduce", "all_gather", "reduce_scatter", "all_to_all", "broadcast" (also the library's names,
// "allreduce" ...).
Result<CollKind> parseCollective(const std::string& name);
// Plans rank 0, 1, ... in turn and hands each Schedule to `each` (rank, plan), which keeps what it needs;
// returns the algorithm's name. Every rank must choose the same algorithm.
Result<std::string> planEachRank(const CallSpec& spec, const std::function<Status(int, const Schedule&)>& each);
// Every rank's plan into a PlanSet. byClass: where the algorithm names plan classes (Algorithm::planClass),
// only each class's first rank is planned and the others are its plan moved, which makes a ring of n ranks
// cost O(n) to plan instead of O(n^2); the claim is checked by planning the second and last rank of every
// class and 8 ranks spread over the communicator in full (an internal error names a rank that differs).
// Otherwise every rank is planned.
Result<PlannedCall> planCall(const CallSpec& spec, bool byClass = true);
// busbw / algbw, as benchmarks/common defines it per collective.
double busBwFactor(CollKind kind, int nranks);

}  // namespace myriad::netsim
