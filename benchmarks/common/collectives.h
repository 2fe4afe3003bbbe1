// The collectives' tables, one per benchmarks/<collective>_perf.cc, defined once so that the myriad_*_perf
// binaries (perf_main.cc) and the peer programs (benchmarks/peers/) size, fill, check and score a message
// the same way; only the call differs (Collective::run is Myriad's, a peer's RankOps makes its own).
#pragma once

#include "benchmarks/common/collective.h"

namespace myriad::bench {

extern const Collective kAllReduce;
extern const Collective kAllGather;
extern const Collective kReduceScatter;
extern const Collective kBroadcast;
extern const Collective kReduce;
extern const Collective kAllToAll;
extern const Collective kSendRecv;

}  // namespace myriad::bench
