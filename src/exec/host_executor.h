// HostExecutor: runs a Schedule on the calling thread over a communicator's connections, to completion, a
// peer's failure, a deadline, or abort. How it waits is its own policy (see host_executor.cc); what it checks
// while stalled is the communicator's (Comm::checkWhileStalled). A failure is recorded on the communicator
// (and published to the other ranks) before it is returned.
#pragma once

#include "core/comm.h"
#include "exec/executor.h"
#include "exec/task.h"

namespace myriad {

class HostExecutor final : public Executor {
 public:
  explicit HostExecutor(Comm& comm) : comm_(comm) {}
  const char* name() const override { return "host"; }
  Status execute(Schedule schedule, const CollArgs& args) override;

 private:
  Status drive(Task& task);
  Comm& comm_;
};

}  // namespace myriad
