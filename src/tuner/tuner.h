// The Tuner seam: given a call and the communicator's shape, name the algorithm to run. The first tuner
// is a handful of rules (rules.cc); a calibrated cost model replaces it behind the same interface.
// dispatch/select.h wraps the tuner with MYRIAD_ALGO and with the fallback when a choice cannot run.
#pragma once

#include <string>

#include "plan/coll_args.h"
#include "plan/comm_view.h"

namespace myriad {

// What a tuner may look at, computed once per call. Invariant: only facts every rank of the call agrees on
// (counts of the collective, communicator shape), so that all ranks choose the same algorithm.
struct CallShape {
  CollKind kind = CollKind::kAllReduce;
  size_t bytes = 0;  // the per-rank buffer the collective is usually sized by (see shapeOf)
  int nranks = 1;
  int nhosts = 1;
  int maxLocal = 1;            // most ranks on one host
  bool perPeerCounts = false;  // all-to-allv: the counts differ between ranks, so `bytes` is 0
};

CallShape shapeOf(const CollArgs& args, const CommView& view);

class Tuner {
 public:
  virtual ~Tuner() = default;
  virtual const char* name() const = 0;
  // The registry name of the preferred algorithm; selectAlgorithm falls back when it cannot run the call.
  virtual std::string choose(const CallShape& shape) const = 0;
};

const Tuner& ruleTuner();

}  // namespace myriad
