// The Tuner seam: given a call's shape, the communicator's view and the algorithms that can run the call,
// name the algorithm to run. The default tuner is the cost model (model_tuner.cc), optionally overridden by
// a plugin (plugin_tuner.cc); dispatch/select.h wraps it with MYRIAD_ALGO and with the fallback when a
// choice cannot run.
#pragma once

#include <functional>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "base/status.h"
#include "plan/coll_args.h"
#include "plan/comm_view.h"
#include "plan/schedule.h"
#include "tuner/link_cost.h"

namespace myriad {

// What a tuner may look at, computed once per call. Invariant: only facts every rank of the call agrees on
// (counts of the collective, communicator shape), so that all ranks choose the same algorithm.
struct CallShape {
  CollKind kind = CollKind::kAllReduce;
  size_t bytes = 0;  // the per-rank buffer the collective is usually sized by (see shapeOf)
  myrDataType_t dtype = myrFloat32;
  int nranks = 1;
  int nhosts = 1;
  int maxLocal = 1;            // most ranks on one host
  bool perPeerCounts = false;  // all-to-allv: the counts differ between ranks, so `bytes` is 0
};

CallShape shapeOf(const CollArgs& args, const CommView& view);

// An algorithm that can run the call, as the tuner sees it: a name and a planner (the tuner may not
// include algorithms/; dispatch wraps the registry's Algorithm in this).
struct Candidate {
  const char* name = "";
  std::function<Result<Schedule>(const CollArgs&, const CommView&)> plan;
};

// One candidate's line of an explanation.
struct CandidateCost {
  std::string name;
  double us = -1;         // predicted; -1 when it could not be planned
  std::string error;      // why not
  bool cpuBound = false;  // the time is an oversubscribed machine's CPU time over its cores (cost_model.h)
};

// A tuner's answer: the chosen name, and every candidate's predicted time (what TUNE logs and
// `myriad-info --tune` prints).
struct Choice {
  std::string name;
  std::string by;  // "model", "plugin <name>", ...
  std::vector<CandidateCost> costs;
};

class Tuner {
 public:
  virtual ~Tuner() = default;
  virtual const char* name() const = 0;
  // The registry name of the preferred algorithm among `candidates` (never empty when there is one);
  // selectAlgorithm falls back when it cannot run the call.
  virtual Choice choose(const CallShape& shape, const CommView& view, std::span<const Candidate> candidates) const = 0;
};

// The cost model over `constants` (model_tuner.cc). It caches its answer per call shape and layout.
std::unique_ptr<Tuner> makeModelTuner(const TunerConstants& constants);
// The plugin at `path` in front of `model` (plugin_tuner.cc); a library that cannot be used is an error
// that says why (the caller warns and keeps the model).
Result<std::unique_ptr<Tuner>> makePluginTuner(const std::string& path, std::unique_ptr<Tuner> model);

// Every candidate's predicted time as a table, the choice marked: "  allreduce.ring  123.4 us  <- chosen".
std::string explainChoice(const CallShape& shape, const std::string& layout, const Choice& choice);

}  // namespace myriad
