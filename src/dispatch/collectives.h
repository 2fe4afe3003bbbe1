// Entry points of the collectives inside the library: validate (a bad call enqueues nothing), then issue:
// inside a group the call is queued (dispatch/group.h), otherwise an algorithm is chosen and its Schedule
// runs now (no stream) or on a host stream.
#pragma once

#include "algorithms/algorithm.h"
#include "core/comm.h"
#include "core/host_stream.h"

namespace myriad {

Status validateCollective(const CollArgs& args, const Comm& comm);
Status issueCollective(Comm& comm, CollArgs args, HostStream* stream);
// Runs `algo` on a checked call, now or on the stream, without the group check (myrGroupEnd uses it).
Status issueNow(Comm& comm, CollArgs args, const Algorithm* algo, HostStream* stream);

}  // namespace myriad
