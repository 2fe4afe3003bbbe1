// Every algorithm in one table: greppable, no static self-registration. A new algorithm file adds its
// accessor here and its source to MYRIAD_SOURCES.
#include "algorithms/registry.h"

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

const char* collName(CollKind kind) {
  switch (kind) {
    case CollKind::kAllReduce: return "allreduce";
    case CollKind::kBroadcast: return "broadcast";
    case CollKind::kReduce: return "reduce";
    case CollKind::kAllGather: return "allgather";
    case CollKind::kReduceScatter: return "reducescatter";
    case CollKind::kAllToAll: return "alltoall";
    case CollKind::kGather: return "gather";
    case CollKind::kScatter: return "scatter";
    case CollKind::kBarrier: return "barrier";
    case CollKind::kSendRecv: return "sendrecv";
  }
  return "?";
}

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
