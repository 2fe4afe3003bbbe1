// VirtualExecutor: every rank's Schedule of one call run in virtual time over a Fabric. A send and its
// receive are matched per rank pair in the order their steps were added (as schedule.h promises). A message
// starts once its send is posted and the pair's previous message has left the wire (one connection is one
// byte stream), and either its receive is posted or it fits in the eager window (the socket buffers at both
// ends: bytes sent ahead of their receives, per pair and direction); the message is split evenly over the
// pair's P paths, each path a flow whose source port the library's PathSet chose and whose spine ECMP chose
// (with PathPolicy::kAdaptive the library's control loop moves slow paths to fresh ports: sim_paths.h),
// and it is delivered when its last flow has finished plus the path latency (a receive posted later
// completes when posted). Reduce, copy and scale steps (and the reduction of a recv-reduce) occupy the
// rank's memory engine for bytes touched / memory bandwidth, one at a time per rank. Buffers are sizes
// only: no data is allocated or moved.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "base/status.h"
#include "plan/schedule.h"
#include "tools/sim/fabric.h"
#include "tools/sim/flow_network.h"
#include "tools/sim/plan_set.h"
#include "tools/sim/sim_paths.h"

namespace myriad::netsim {

struct Elephant {
  std::vector<int> links;  // a background flow of another tenant, pinned to these links, never ending
};

// Links failing during the call: at `at` seconds they go dark; the flows on them stop (their packets in
// flight are lost) and resume `resumeAfter` seconds later on the path ECMP then picks (their sender's
// retransmission timeout); flows started after the failure avoid the dead links at once.
struct LinkFailure {
  std::vector<int> links;
  double at = 0, resumeAfter = 0;
};

// One step of one rank in virtual time, for a trace (VirtualExecutor::traceSteps): from the moment it could
// start (its dependencies done) to its completion.
struct StepSlice {
  int rank = 0, step = 0;
  double start = 0, end = 0;  // seconds
};

struct RunResult {
  double seconds = 0;              // the last rank's finish
  std::vector<double> rankFinish;  // per rank
  std::vector<double> linkBytes;   // bytes each link carried, elephants included
  uint64_t messages = 0, flows = 0;
  uint64_t flowsCut = 0;        // flows that lost their path to a LinkFailure
  uint64_t repaths = 0;         // PathPolicy::kAdaptive: paths moved to fresh ports
  std::vector<int> spineFlows;  // flows that crossed each spine
  uint64_t rerates = 0, rerateRounds = 0, rerateFlows = 0, rerateLinks = 0;  // FlowNetwork::Stats (profiling)
  std::vector<StepSlice> steps;  // traceSteps(true): every step, in completion order
  // Memory the run held per rank beyond the plans: the widest window of step states (a rank's steps from its
  // first one not finished to the last one touched) and of message states (a connection's messages from the
  // first one not read), as entries held.
  size_t stepWindow = 0, messageWindow = 0;
};

class VirtualExecutor {
 public:
  VirtualExecutor(const Fabric& fabric, int paths, std::vector<Elephant> elephants = {});
  // Every rank's plan (PlanSet: shapes shared between ranks). Fails on a deadlock, naming the ranks and steps
  // that wait. Memory beyond the plans follows the steps and messages in flight, not the plans' length.
  Result<RunResult> run(const PlanSet& plans) const;
  // schedules[r]: rank r's plan, compacted into a PlanSet first (which refuses a two-stage plan).
  Result<RunResult> run(const std::vector<Schedule>& schedules) const;
  // Record every step's start and end in RunResult::steps (memory: one StepSlice per step).
  void traceSteps(bool on) { trace_ = on; }
  void failures(std::vector<LinkFailure> f) { failures_ = std::move(f); }
  // Bytes a pair may send ahead of their receives, per direction (0: every message waits for its receive).
  void eagerBytes(double b) { eagerBytes_ = b; }
  // How a pair's P paths are used: a static even split, or the library's control loop re-pathing slow ones.
  void policy(PathPolicy p) { policy_ = p; }
  // Why a run of a cut plan (steady.h) would not be the same run, or "" when it would: link failures at set
  // times, a trace of every step. (The adaptive policy's control loop is cut like the rest: a cut run is the
  // full run's start, where the loop has done what it does, and the check run catches a loop still moving.)
  std::string notCuttable() const {
    return !failures_.empty() ? "link failures happen at set times" : trace_ ? "a trace records every step" : "";
  }

 private:
  const Fabric& fabric_;
  int paths_;
  std::vector<Elephant> elephants_;
  bool trace_ = false;
  std::vector<LinkFailure> failures_;
  double eagerBytes_ = kDefaultEagerBytes;
  PathPolicy policy_ = PathPolicy::kStatic;
};

}  // namespace myriad::netsim
