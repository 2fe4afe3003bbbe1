// The Algorithm -> Schedule seam. An algorithm says whether it can run a call (and why not), and plans it
// into a Schedule: chunking, peers and buffer references decided once, from the call's arguments and a
// read-only CommView, with no I/O and no resource touched. An executor (src/exec) then runs the Schedule.
#pragma once

#include <cstdint>
#include <optional>

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
  // This rank's plan class, where the algorithm knows one: ranks r and q of one class have plans that are
  // equal step for step (kinds, sizes, dependencies; buffer offsets aside) except that each peer p of r's
  // plan is peer p + (q - r) mod n of q's. Cheap (no Schedule is built), so a simulator of many ranks plans
  // one rank per class and moves its peers for the others. nullopt: unknown (every rank is planned).
  virtual std::optional<uint64_t> planClass(const CollArgs&, const CommView&) const { return std::nullopt; }
};

}  // namespace myriad
