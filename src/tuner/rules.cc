// The first tuner: rules by message size, ranks and hosts. Latency-bound sizes go to the algorithms with
// log(n) rounds (halving-doubling, trees), bandwidth-bound sizes to the rings, and when ranks share hosts
// evenly the hierarchical forms keep the slow inter-host links to one message per rail. The thresholds are
// from the measurements in docs/design/tuning.md (8 ranks as 2 hosts x 4, shm inside, tcp between).
#include "tuner/tuner.h"

namespace myriad {
namespace {

constexpr size_t kKiB = 1024;

class RuleTuner final : public Tuner {
 public:
  const char* name() const override { return "rules"; }
  std::string choose(const CallShape& s) const override {
    // Uneven hosts still ask for hier: selectAlgorithm then falls back and logs why.
    bool hier = s.nhosts > 1 && s.maxLocal > 1;
    switch (s.kind) {
      case CollKind::kAllReduce:
        if (s.bytes <= 64 * kKiB) return "allreduce.halving_doubling";
        if (hier) return "allreduce.hier";
        if (s.bytes <= 512 * kKiB) return "allreduce.tree";
        return "allreduce.ring";
      case CollKind::kAllGather: return hier ? "allgather.hier" : "allgather.ring";
      case CollKind::kReduceScatter: return hier ? "reducescatter.hier" : "reducescatter.ring";
      case CollKind::kBroadcast: return s.bytes <= 256 * kKiB ? "broadcast.tree" : "broadcast.ring";
      case CollKind::kReduce: return s.bytes <= 256 * kKiB ? "reduce.tree" : "reduce.ring";
      case CollKind::kAllToAll:
        // All-to-allv: each rank knows only its own counts, so no size-based choice would agree.
        if (s.perPeerCounts) return "alltoall.pairwise";
        return hier && s.bytes <= 64 * kKiB ? "alltoall.hier" : "alltoall.pairwise";
      case CollKind::kGather: return "gather.linear";
      case CollKind::kScatter: return "scatter.linear";
      case CollKind::kBarrier: return "barrier.dissemination";
      case CollKind::kSendRecv: return "sendrecv.group";
    }
    return "";
  }
};

}  // namespace

const Tuner& ruleTuner() {
  static const RuleTuner kTuner;
  return kTuner;
}

}  // namespace myriad
