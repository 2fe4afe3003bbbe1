// A simulated call as a Chrome trace (the JSON that Perfetto and chrome://tracing open): one process per rank
// ("rank 3"), each step a complete event ("send to 4, 65536 B") from when it could start to when it finished,
// in virtual microseconds. A rank's steps overlap (sends and receives in flight together), so each rank's
// steps are laid out on as few lanes (threads) as keep every lane's events apart.
#pragma once

#include <string>
#include <vector>

#include "base/status.h"
#include "tools/sim/plan_set.h"
#include "tools/sim/virtual_executor.h"

namespace myriad::netsim {

// Writes `steps` (VirtualExecutor::traceSteps) of `plans` to `path`; `title` names the run.
Status writeChromeTrace(const std::string& path, const std::string& title, const PlanSet& plans,
                        const std::vector<StepSlice>& steps);

}  // namespace myriad::netsim
