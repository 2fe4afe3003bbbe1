// DeterministicExecutor: every rank's ScheduleRun stepped on one thread over a SimFabric, in a seeded random
// order each round (ranks start a seeded number of rounds apart, and a rank with news is sometimes left for
// the next round). Invariant: it never hangs — when no rank can move and nothing is in flight it fails with
// each unfinished rank's waiting steps (which peer, which step) and the messages nobody received; a call
// that ends with messages still in the fabric fails too. The same seed replays the same run.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "exec/schedule_run.h"
#include "plan/coll_args.h"
#include "plan/schedule.h"
#include "sim_fabric.h"

namespace myriad::sim {

// One rank's part of a call: its plan and the arguments whose buffers the plan refers to.
struct RankCall {
  Schedule schedule;
  CollArgs args;
};

struct RunStats {
  uint64_t rounds = 0;                      // rounds of the fabric's clock the call took
  uint64_t messages = 0;                    // messages posted
  std::vector<uint64_t> started, finished;  // per rank: the round it started and finished the call
};

// Whatever runs one call on every rank of a test communicator: this executor, or the device tier's lowering
// onto a host-backed device (tests/device).
class CallRunner {
 public:
  virtual ~CallRunner() = default;
  // Runs calls[r] on rank r, for every rank, to completion. Message tags continue from the previous call,
  // as on a communicator. An error names the rank (the first one to fail), or is a deadlock report.
  // After an error the runner is unusable.
  virtual Status run(std::vector<RankCall>& calls, RunStats* stats = nullptr) = 0;
};

class DeterministicExecutor final : public CallRunner {
 public:
  DeterministicExecutor(int nranks, const SimOptions& options);
  ~DeterministicExecutor() override;
  int nranks() const { return fabric_.nranks(); }
  // Fills every field of *stats (rounds, per-rank start and finish).
  Status run(std::vector<RankCall>& calls, RunStats* stats = nullptr) override;
  SimFabric& fabric() { return fabric_; }

 private:
  class Context;
  std::string deadlock(const std::vector<std::unique_ptr<ScheduleRun>>& runs, const std::vector<uint8_t>& done) const;

  SimFabric fabric_;
  std::vector<std::unique_ptr<Context>> ctx_;
};

}  // namespace myriad::sim
