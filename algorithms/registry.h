// The registry: one plain table of every algorithm, and the choice of one for a call.
#pragma once

#include <span>
#include <string>

#include "algorithms/algorithm.h"

namespace myriad {

std::span<const Algorithm* const> allAlgorithms();
const Algorithm* findAlgorithm(const std::string& name);
// MYRIAD_ALGO when it names an algorithm of this collective, else the default for the call.
Result<const Algorithm*> chooseAlgorithm(const CollArgs& args, const Comm& comm);
// Checks MYRIAD_ALGO at init: an unknown name is an error there, not a surprise later.
Status validateAlgoOverride(const std::string& name);

}  // namespace myriad
