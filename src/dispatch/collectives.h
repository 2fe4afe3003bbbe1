// Entry points of the collectives inside the library: validate (a bad call enqueues nothing), then issue:
// inside a group the call is queued (dispatch/group.h), otherwise an algorithm is chosen and its Schedule
// runs now (no stream) or on a host stream.
#pragma once

#include "algorithms/algorithm.h"
#include "core/comm.h"
#include "core/host_stream.h"

namespace myriad {

// Where a call runs: on the caller's thread (both null), on a host stream, or — on device memory — ordered on
// the caller's device stream (`device`: a cudaStream_t; with device buffers a null stream is CUDA's default
// stream).
struct CallStream {
  HostStream* host = nullptr;
  void* device = nullptr;
  friend bool operator==(const CallStream&, const CallStream&) = default;
};

Status validateCollective(const CollArgs& args, const Comm& comm);
// The device a call runs on (its buffers are device memory, or a device stream orders it), null for a host
// call, or why it can run nowhere (host and device buffers mixed, a device stream with host buffers, ...).
Result<Device*> callDevice(const CollArgs& args, const Comm& comm, const CallStream& stream);
Status issueCollective(Comm& comm, CollArgs args, CallStream stream);
// Runs `algo` on a checked call, now or on the stream, without the group check (myrGroupEnd uses it).
Status issueNow(Comm& comm, CollArgs args, const Algorithm* algo, CallStream stream);

}  // namespace myriad
