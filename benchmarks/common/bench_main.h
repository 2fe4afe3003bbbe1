// benchMain: the main() of every perf binary. Parses options, decides how ranks come to be (a launcher's
// environment, or -np N forked locally from this process, which then hosts the rendezvous and only waits),
// and runs the collective's table on each rank.
#pragma once

#include "benchmarks/common/collective.h"
#include "benchmarks/common/options.h"
#include "benchmarks/common/report.h"

namespace myriad::bench {

// What every program (Myriad's and the peers') does before any rank exists: parses argv (with `peer`'s
// flags, if given), rejects a --json file that cannot be written and, for a peer, memory other than host, and
// fills run.program (Myriad's -m is decided in benchMain). Returns false with *exitCode set; the message is
// already printed.
bool prepareRun(int argc, char** argv, const PeerFlags* peer, Options* options, RunDescription* run, int* exitCode);

// Returns the process exit code: 0 when every rank ran and every checked value was right.
int benchMain(int argc, char** argv, const Collective& coll);

}  // namespace myriad::bench
