// Every algorithm in one table: greppable, no static self-registration. A new algorithm file adds its
// accessor here and its source to MYRIAD_SOURCES.
#include "dispatch/registry.h"

namespace myriad {

const Algorithm& allreduceRing();
const Algorithm& allreduceTree();
const Algorithm& allreduceHalvingDoubling();
const Algorithm& allreduceHier();
const Algorithm& allgatherRing();
const Algorithm& allgatherHier();
const Algorithm& reducescatterRing();
const Algorithm& reducescatterHier();
const Algorithm& broadcastRing();
const Algorithm& broadcastTree();
const Algorithm& reduceRing();
const Algorithm& reduceTree();
const Algorithm& alltoallPairwise();
const Algorithm& alltoallHier();
const Algorithm& gatherLinear();
const Algorithm& scatterLinear();
const Algorithm& barrierDissemination();
const Algorithm& sendrecvGroup();

std::span<const Algorithm* const> allAlgorithms() {
  static const Algorithm* const kTable[] = {
      &allreduceRing(),     &allreduceTree(),        &allreduceHalvingDoubling(),
      &allreduceHier(),     &allgatherRing(),        &allgatherHier(),
      &reducescatterRing(), &reducescatterHier(),    &broadcastRing(),
      &broadcastTree(),     &reduceRing(),           &reduceTree(),
      &alltoallPairwise(),  &alltoallHier(),         &gatherLinear(),
      &scatterLinear(),     &barrierDissemination(), &sendrecvGroup(),
  };
  return kTable;
}

const Algorithm* findAlgorithm(const std::string& name) {
  for (const Algorithm* a : allAlgorithms())
    if (name == a->name()) return a;
  return nullptr;
}

std::vector<const Algorithm*> algorithmsFor(CollKind kind) {
  std::vector<const Algorithm*> out;
  for (const Algorithm* a : allAlgorithms())
    if (a->kind() == kind) out.push_back(a);
  return out;
}

std::string algorithmNames(const CollKind* kind) {
  std::string out;
  for (const Algorithm* a : allAlgorithms())
    if (!kind || a->kind() == *kind) out += std::string(out.empty() ? "" : ", ") + a->name();
  return out;
}

}  // namespace myriad
