// The Algorithm -> Schedule seam. An algorithm says whether it can run a call (and why not), and plans it
// into a Schedule: chunking, peers and buffer references decided once, from the call's arguments and a
// read-only CommView, with no I/O and no resource touched. An executor (src/exec) then runs the Schedule.
#pragma once

#include "plan/coll_args.h"
#include "plan/comm_view.h"
#include "plan/schedule.h"

namespace myriad {

class Algorithm {
 public:
  virtual ~Algorithm() = default;
  // The registry name, e.g. "allreduce.ring": the same spelling in logs, MYRIAD_ALGO, benchmarks and docs.
  virtual const char* name() const = 0;
  virtual CollKind kind() const = 0;
  // Ok, or NotSupported with the reason.
  virtual Status supports(const CollArgs& args, const CommView& view) const = 0;
  virtual Result<Schedule> plan(const CollArgs& args, const CommView& view) const = 0;
};

}  // namespace myriad
