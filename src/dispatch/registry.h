// The registry: one plain table of every algorithm, looked up by name or by collective.
#pragma once

#include <span>
#include <string>
#include <vector>

#include "algorithms/algorithm.h"

namespace myriad {

std::span<const Algorithm* const> allAlgorithms();
const Algorithm* findAlgorithm(const std::string& name);
// The registered algorithms of one collective, in table order.
std::vector<const Algorithm*> algorithmsFor(CollKind kind);
// "allreduce.ring, allreduce.tree, ..." for messages; every algorithm when kind is null.
std::string algorithmNames(const CollKind* kind = nullptr);

}  // namespace myriad
