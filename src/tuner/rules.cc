// The first tuner: rules by message size, ranks and hosts. Latency-bound sizes go to the algorithms with
// log(n) rounds (halving-doubling, trees), bandwidth-bound sizes to the rings, and when ranks share hosts
// (of any sizes) the hierarchical forms keep the slow inter-host links to one message per rail. The
// thresholds are from the measurements in docs/design/tuning.md (one host with 3, 4 and 6 ranks; 8 ranks
// as 2 hosts x 4, shm inside, tcp between); the one rule that is not says so.
#include "tuner/tuner.h"

namespace myriad {
namespace {

constexpr size_t kKiB = 1024;

class RuleTuner final : public Tuner {
 public:
  const char* name() const override { return "rules"; }
  std::string choose(const CallShape& s) const override {
    // Hosts of any sizes: on a smaller host a rank serves several rails (HostLanes, algorithms/layout.h).
    bool hier = s.nhosts > 1 && s.maxLocal > 1;
    switch (s.kind) {
      case CollKind::kAllReduce:
        if (s.bytes <= 64 * kKiB) return "allreduce.halving_doubling";
        if (hier) return "allreduce.hier";
        // A power of two needs no fold-in step, and halving-doubling then moves as few bytes as the ring in
        // log2(n) instead of n-1 rounds.
        if ((s.nranks & (s.nranks - 1)) == 0 && s.bytes <= 1024 * kKiB) return "allreduce.halving_doubling";
        // Not measured (ranks here share two cores): at many ranks the ring's 2(n-1) hops dominate medium
        // messages, and the double binary tree's 2 log2(n) do not.
        if (s.nranks >= 32 && s.bytes <= 4096 * kKiB) return "allreduce.tree";
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
