// The Executor seam: binds a Schedule to memory, connections and message tags, and runs it. The host
// executor (host_executor.h) runs it on the calling thread over the communicator's transports; the
// deterministic test executor steps many ranks on one thread over an in-memory transport; a CUDA executor
// lowers it to stream operations and a simulator runs it in virtual time. None needs anything of another:
// what they share is the Schedule (plan/schedule.h) and its ordering contract.
#pragma once

#include "plan/coll_args.h"
#include "plan/schedule.h"

namespace myriad {

class Executor {
 public:
  virtual ~Executor() = default;
  virtual const char* name() const = 0;
  // Runs `schedule` for the call `args` (its buffers are bound to the schedule's references). A
  // host executor returns once the result is in place; a stream-ordered one once the work is enqueued.
  virtual Status execute(Schedule schedule, const CollArgs& args) = 0;
};

}  // namespace myriad
