// Groups (myrGroupStart / myrGroupEnd): calls made on this thread between the outermost start and end are
// checked at once and queued; the end issues them per communicator — its collectives in call order, then
// all its point-to-point calls merged into one operation whose messages are all posted together, so any
// mix of sends and receives between any peers completes. Communicators of one group run side by side
// (one thread each when the group spans several), so one thread may drive several ranks, as with NCCL.
// A group over several communicators issues all its calls on one stream (or none): it is queued there as
// one item, so every rank's stream sees the group in that rank's program order.
#pragma once

#include "algorithms/algorithm.h"
#include "core/comm.h"
#include "core/host_stream.h"
#include "dispatch/collectives.h"

namespace myriad {

bool groupActive();
void groupStart();
// Ends one level; the outermost issues what was queued and returns the first error.
Status groupEnd();
// Queues a checked call of the current group.
Status groupAdd(Comm& comm, CollArgs args, CallStream stream);

}  // namespace myriad
