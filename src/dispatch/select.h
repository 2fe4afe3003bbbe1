// Algorithm selection for one call: the manual override, the tuner, and the fallback when a choice cannot run.
#pragma once

#include <string>

#include "algorithms/algorithm.h"

namespace myriad {

// MYRIAD_ALGO first (an unknown name, two names for one collective, or a name that cannot run this call
// is InvalidUsage listing the valid names), then the tuner, then the first algorithm that supports the call.
// `forced` is MYRIAD_ALGO's value (a comma list of registry names; empty: none).
Result<const Algorithm*> selectAlgorithm(const CollArgs& args, const CommView& view, const std::string& forced);

}  // namespace myriad
