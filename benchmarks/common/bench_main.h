// benchMain: the main() of every perf binary. Parses options, decides how ranks come to be (a launcher's
// environment, or -np N forked locally from this process, which then hosts the rendezvous and only waits),
// and runs the collective's table on each rank.
#pragma once

#include "benchmarks/common/collective.h"

namespace myriad::bench {

// Returns the process exit code: 0 when every rank ran and every checked value was right.
int benchMain(int argc, char** argv, const Collective& coll);

}  // namespace myriad::bench
