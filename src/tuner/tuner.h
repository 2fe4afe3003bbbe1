// The Tuner seam: given a call and the communicator's shape, name the algorithm to run. The first tuner
// is a handful of rules (rules.cc); a calibrated cost model replaces it behind the same interface.
// selectAlgorithm() wraps the tuner with MYRIAD_ALGO and with the fallback when a choice cannot run.
#pragma once

#include <string>

#include "algorithms/algorithm.h"

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

CallShape shapeOf(const CollArgs& args, const Comm& comm);

class Tuner {
 public:
  virtual ~Tuner() = default;
  virtual const char* name() const = 0;
  // The registry name of the preferred algorithm; selectAlgorithm falls back when it cannot run the call.
  virtual std::string choose(const CallShape& shape) const = 0;
};

const Tuner& ruleTuner();

// MYRIAD_ALGO first (an unknown name, two names for one collective, or a name that cannot run this call
// is InvalidUsage listing the valid names), then the tuner, then the first algorithm that supports the call.
Result<const Algorithm*> selectAlgorithm(const CollArgs& args, const Comm& comm);

}  // namespace myriad
