// DeviceExecutor: runs a Schedule on device memory, ordered on the caller's device stream. At call time the
// schedule is lowered to stream operations and enqueued; nothing waits on the host, and no step needs the
// host again (the first stage of the CUDA path: see docs/cuda.md).
//
// The lowering: every message step goes on a lane, an internal stream per peer and direction, so that a send
// waiting for room at a peer never holds back a receive; a compute step goes on the compute lane that follows
// the lane of its latest dependency (or on the caller's stream when it has none). A dependency across lanes
// is an event. A message travels in pieces of at most one inbox slot of the receiver (DeviceChannel):
//   send piece q:  wait freed >= q - slots; copy into the peer's slot; write the peer's `arrived` = q
//   recv piece r:  wait arrived >= r; copy (or reduce, for recvReduce) out of our slot; write the peer's
//                  `freed` = r
// The calls of one communicator are serialised on the device: each starts after the previous one's end
// event, whatever stream it is on.
#pragma once

#include "core/comm.h"
#include "core/device_comm.h"
#include "exec/executor.h"

namespace myriad {

// Ok when the lowering can run `schedule` now on `stream`: not a plan whose second stage is planned from
// data the ranks exchange (that needs the host between the stages), no host-side local bytes, and under
// CUDA graph capture, channels and scratch already set up (they cannot be captured). A refusal enqueues
// nothing and leaves the communicator usable.
Status deviceRunnable(const Schedule& schedule, DeviceComm& dev, DeviceStream* stream);
// Enqueues `schedule` for the call `args` (device buffers) on `stream`, over `dev`'s channels and lanes.
// Checks deviceRunnable first and enqueues nothing when it fails. A failure after the first operation was
// enqueued leaves the communicator's channels out of step: the caller must fail the communicator.
Status enqueueSchedule(const Schedule& schedule, const CollArgs& args, DeviceComm& dev, DeviceStream* stream);

class DeviceExecutor final : public Executor {
 public:
  DeviceExecutor(Comm& comm, DeviceComm& dev, DeviceStream* stream) : comm_(comm), dev_(dev), stream_(stream) {}
  const char* name() const override { return "device"; }
  Status execute(Schedule schedule, const CollArgs& args) override;

 private:
  Comm& comm_;
  DeviceComm& dev_;
  DeviceStream* stream_;
};

}  // namespace myriad
