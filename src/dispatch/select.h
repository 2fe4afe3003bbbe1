// Algorithm selection for one call: the manual override, the tuner, and the fallback when a choice cannot run.
#pragma once

#include <string>
#include <vector>

#include "algorithms/algorithm.h"
#include "base/config.h"
#include "tuner/tuner.h"

namespace myriad {

// MYRIAD_ALGO first (an unknown name, two names for one collective, or a name that cannot run this call
// is InvalidUsage listing the valid names), then `tuner` over the algorithms that support the call, then the
// first algorithm that supports the call. `forced` is MYRIAD_ALGO's value (a comma list of registry names;
// empty: none).
Result<const Algorithm*> selectAlgorithm(const CollArgs& args, const CommView& view, const std::string& forced,
                                         const Tuner& tuner);
// The same with the cost model at its default constants.
Result<const Algorithm*> selectAlgorithm(const CollArgs& args, const CommView& view, const std::string& forced);
// The communicator's settings: MYRIAD_ALGO, and the tuner of MYRIAD_TUNER_FILE and MYRIAD_TUNER_PLUGIN
// (a file that cannot be read or parsed fails the call naming the file and line).
Result<const Algorithm*> selectAlgorithm(const CollArgs& args, const CommView& view, const Config& config);

// The tuner for these settings, made once per process and setting (a plugin that cannot be used is a
// warning, and the model is used without it).
Result<const Tuner*> tunerFor(const std::string& tunerFile, const std::string& tunerPlugin);
// The registered algorithms that support the call, as the tuner sees them.
std::vector<Candidate> candidatesFor(const CollArgs& args, const CommView& view);

}  // namespace myriad
