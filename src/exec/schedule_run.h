// ScheduleRun: one rank's Schedule bound to real memory and connections, advanced without blocking. Compute
// steps run as soon as their dependencies are done; a send or receive is posted once its dependencies are
// done and every earlier message with the same peer in the same direction has been posted; completions come
// back in order per peer and direction. It knows nothing of how the caller waits: the host executor loops
// over it with its spin/sleep policy, the deterministic test executor steps many of them on one thread.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "core/transport.h"
#include "exec/task.h"
#include "plan/coll_args.h"
#include "plan/schedule.h"

namespace myriad {

// What a run needs from whoever owns the resources: connections, message tags and scratch memory.
class RunContext {
 public:
  virtual ~RunContext() = default;
  virtual int rank() const = 0;
  virtual int nranks() const = 0;
  // The connection to `peer`, opened on first use (may block for set-up, with a deadline).
  virtual Result<Connection*> connection(int peer) = 0;
  // Message tags count messages per peer and direction across calls, so both ends of a pair agree.
  virtual uint32_t nextSendTag(int peer) = 0;
  virtual uint32_t nextRecvTag(int peer) = 0;
  // At least `bytes` of pre-faulted scratch, valid until the next call.
  virtual Result<uint8_t*> scratch(size_t bytes) = 0;
};

class ScheduleRun final : public Task {
 public:
  // `args` supplies the call's buffers (sendbuff, recvbuff, the point-to-point buffers).
  ScheduleRun(Schedule schedule, const CollArgs& args, RunContext& ctx);
  ~ScheduleRun() override;
  // Binds the buffers and opens the connections the steps need.
  Status init();
  Status start() override;
  Status progress(bool* done) override;
  // Where an unfinished run stands, for deadlock reports: per peer, the first message step in each
  // direction not yet done (posted and waiting for the peer, or not posted and waiting for which steps),
  // then compute steps still waiting; at most `maxLines` lines, "" when done.
  std::string pending(size_t maxLines = 8) const;
  // The last progress() stopped because nothing could move without news from a connection, not because it
  // used up its rounds: calling it again before a connection has news would do nothing.
  bool settled() const { return settled_; }
  const Schedule& schedule() const { return s_; }

 private:
  using Step = Schedule::Step;
  struct Queue {
    std::vector<Step> queue;  // message steps with this peer and direction, in the order they were added
    size_t posted = 0, completed = 0;
  };
  struct Lane {
    Connection* conn = nullptr;
    Queue sends, recvs;
    bool active = false;  // in activeLanes_
  };

  Status bind();
  uint8_t* at(const BufRef& b) const { return bases_[b.base] + b.offset; }
  void ready(Step i);
  void complete(Step i);
  void runCompute();
  Status postReady(Lane& lane, Queue& q, bool send);
  void reap(Queue& q);
  void activate(int32_t lane);
  bool needsTurn(const Lane& lane) const;
  void logStopped() const;
  std::string describeStep(Step i) const;

  Schedule s_;
  const CollArgs& args_;
  RunContext& ctx_;
  std::vector<uint8_t*> bases_;        // by BufRef::base
  std::vector<uint8_t> local_;         // the schedule's local bytes, as this run changes them
  std::vector<int32_t> waiting_;       // unfinished dependencies per step
  std::vector<uint8_t> done_;          // per step: completed
  std::vector<int32_t> dependentsAt_;  // CSR: the dependents of step i are dependents_[at[i], at[i+1])
  std::vector<Step> dependents_;
  std::vector<Request> reqs_;
  std::vector<Lane> lanes_;      // one per peer that the steps talk to, in order of first use
  std::vector<int32_t> laneOf_;  // per step: its lane (message steps), else -1
  // Lanes with something to post, poll or reap; progress() visits only these, so a rank that talks to
  // every peer (all-to-all over 1,000 ranks) does not walk every lane on every turn.
  std::vector<int32_t> activeLanes_;
  std::vector<Step> computeReady_;
  size_t completed_ = 0;
  bool settled_ = false;
};

}  // namespace myriad
