// ScheduleTask: runs a Schedule. Compute steps run as soon as their dependencies are done; a send or
// receive is posted once its dependencies are done and every earlier message with the same peer in the
// same direction has been posted; completions come back in order per peer and direction.
#include "algorithms/schedule.h"

#include <cstring>
#include <string>

#include "core/log.h"
#include "exec/dtype.h"
#include "exec/reduce.h"

namespace myriad {

Schedule::Step Schedule::add(StepInfo s, const Deps& deps) {
  s.firstDep = static_cast<int32_t>(deps_.size());
  s.numDeps = static_cast<int32_t>(deps.size());
  for (Step d : deps) {
    MYR_ASSERT(d >= 0 && d < static_cast<Step>(steps_.size()));
    deps_.push_back(d);
  }
  steps_.push_back(s);
  return static_cast<Step>(steps_.size() - 1);
}

Schedule::Step Schedule::send(int peer, const void* buf, size_t bytes, const Deps& deps) {
  StepInfo s{Kind::kSend};
  s.peer = peer;
  s.a = buf;
  s.n = bytes;
  return add(s, deps);
}

Schedule::Step Schedule::recv(int peer, void* buf, size_t bytes, const Deps& deps) {
  StepInfo s{Kind::kRecv};
  s.peer = peer;
  s.dst = buf;
  s.n = bytes;
  return add(s, deps);
}

Schedule::Step Schedule::recvReduce(int peer, void* dst, const void* b, void* staging, size_t count,
                                    myrDataType_t dtype, myrRedOp_t op, const Deps& deps) {
  StepInfo s{Kind::kRecvReduce};
  s.peer = peer;
  s.dst = dst;
  s.b = b;
  s.staging = staging;
  s.n = count * dtypeSize(dtype);
  s.dtype = dtype;
  s.op = op;
  return add(s, deps);
}

Schedule::Step Schedule::reduce(void* dst, const void* a, const void* b, size_t count, myrDataType_t dtype,
                                myrRedOp_t op, const Deps& deps) {
  StepInfo s{Kind::kReduce};
  s.dst = dst;
  s.a = a;
  s.b = b;
  s.n = count;
  s.dtype = dtype;
  s.op = op;
  return add(s, deps);
}

Schedule::Step Schedule::copy(void* dst, const void* src, size_t bytes, const Deps& deps) {
  StepInfo s{Kind::kCopy};
  s.dst = dst;
  s.a = src;
  s.n = bytes;
  return add(s, deps);
}

Schedule::Step Schedule::scaleAvg(void* buf, size_t count, myrDataType_t dtype, int n, const Deps& deps) {
  StepInfo s{Kind::kScale};
  s.dst = buf;
  s.n = count;
  s.dtype = dtype;
  s.divisor = n;
  return add(s, deps);
}

Schedule::Step Schedule::join(const Deps& deps) {
  return add(StepInfo{Kind::kJoin}, deps);
}

uint8_t* Schedule::reserveScratch(size_t bytes) {
  MYR_ASSERT(!scratchTaken_);
  scratchTaken_ = true;
  return static_cast<uint8_t*>(comm_.scratch(std::max<size_t>(bytes, 1)));
}

class ScheduleTask final : public Task {
 public:
  ScheduleTask(Schedule&& s, const char* name) : s_(std::move(s)), name_(name) {}
  // A task dropped before it finished (its call failed) logs where each of its lanes stood: the first
  // thing to read when a schedule hangs.
  ~ScheduleTask() override {
    if (completed_ == waiting_.size()) return;
    std::string o = std::string(name_) + " stopped after " + std::to_string(completed_) + " of " +
                    std::to_string(waiting_.size()) + " steps; messages posted/done/planned:";
    for (int p : active_) {
      const Lane& l = lanes_[static_cast<size_t>(p)];
      o += " rank " + std::to_string(p) + " send " + std::to_string(l.sends.posted) + "/" +
           std::to_string(l.sends.completed) + "/" + std::to_string(l.sends.queue.size()) + " recv " +
           std::to_string(l.recvs.posted) + "/" + std::to_string(l.recvs.completed) + "/" +
           std::to_string(l.recvs.queue.size()) + ";";
    }
    MYR_LOG(kInfo, kColl, s_.comm_.rank(), o);
  }

  Status init() {
    size_t n = s_.steps_.size();
    waiting_.resize(n);
    dependents_.resize(n);
    reqs_.resize(n);
    int nranks = s_.comm_.nranks();
    lanes_.resize(static_cast<size_t>(nranks));
    for (size_t i = 0; i < n; ++i) {
      const auto& st = s_.steps_[i];
      waiting_[i] = st.numDeps;
      for (int32_t d = 0; d < st.numDeps; ++d)
        dependents_[static_cast<size_t>(s_.deps_[static_cast<size_t>(st.firstDep + d)])].push_back(
            static_cast<Step>(i));
      if (!isMessage(st.kind)) continue;
      if (st.peer < 0 || st.peer >= nranks || st.peer == s_.comm_.rank())
        return internalError(std::string(name_) + ": message step to bad peer " + std::to_string(st.peer));
      Lane& lane = lanes_[static_cast<size_t>(st.peer)];
      if (!lane.conn) {
        MYR_ASSIGN_OR_RETURN(lane.conn, s_.comm_.connection(st.peer));
        active_.push_back(st.peer);
      }
      (st.kind == Schedule::Kind::kSend ? lane.sends : lane.recvs).queue.push_back(static_cast<Step>(i));
    }
    return Status::ok();
  }

  Status start() override {
    for (size_t i = 0; i < waiting_.size(); ++i)
      if (waiting_[i] == 0) ready(static_cast<Step>(i));
    return Status::ok();
  }

  Status progress(bool* done) override {
    for (int round = 0; round < 8; ++round) {
      size_t before = completed_;
      runCompute();
      for (int peer : active_) {
        Lane& lane = lanes_[static_cast<size_t>(peer)];
        MYR_TRY(postReady(lane, lane.sends, true));
        MYR_TRY(postReady(lane, lane.recvs, false));
        if (lane.sends.posted > lane.sends.completed || lane.recvs.posted > lane.recvs.completed)
          MYR_TRY(lane.conn->poll());
        reap(lane.sends);
        reap(lane.recvs);
      }
      runCompute();
      if (completed_ == before) break;
    }
    *done = completed_ == waiting_.size();
    return Status::ok();
  }

 private:
  using Step = Schedule::Step;
  struct Queue {
    std::vector<Step> queue;  // message steps with this peer and direction, in the order they were added
    size_t posted = 0, completed = 0;
  };
  struct Lane {
    Connection* conn = nullptr;
    Queue sends, recvs;
  };

  // A step whose dependencies are all done: compute steps wait in computeReady_, message steps are
  // marked and posted in order by postReady.
  static bool isMessage(Schedule::Kind k) {
    return k == Schedule::Kind::kSend || k == Schedule::Kind::kRecv || k == Schedule::Kind::kRecvReduce;
  }

  void ready(Step i) {
    if (isMessage(s_.steps_[static_cast<size_t>(i)].kind)) return;  // waiting_ == 0 marks it
    computeReady_.push_back(i);
  }

  void complete(Step i) {
    ++completed_;
    for (Step d : dependents_[static_cast<size_t>(i)])
      if (--waiting_[static_cast<size_t>(d)] == 0) ready(d);
  }

  void runCompute() {
    while (!computeReady_.empty()) {
      Step i = computeReady_.back();
      computeReady_.pop_back();
      const auto& st = s_.steps_[static_cast<size_t>(i)];
      switch (st.kind) {
        case Schedule::Kind::kReduce: reduce(st.dst, st.a, st.b, st.n, st.dtype, st.op); break;
        case Schedule::Kind::kCopy:
          if (st.n && st.dst != st.a) std::memmove(st.dst, st.a, st.n);
          break;
        case Schedule::Kind::kScale: scaleAvg(st.dst, st.n, st.dtype, st.divisor); break;
        default: break;
      }
      complete(i);
    }
  }

  Status postReady(Lane& lane, Queue& q, bool send) {
    while (q.posted < q.queue.size() && waiting_[static_cast<size_t>(q.queue[q.posted])] == 0) {
      Step i = q.queue[q.posted++];
      const auto& st = s_.steps_[static_cast<size_t>(i)];
      Request& r = reqs_[static_cast<size_t>(i)];
      int peer = lane.conn->peer().rank;
      if (send) {
        r = Request{const_cast<void*>(st.a), st.n, s_.comm_.nextSendTag(peer), false};
        MYR_TRY(lane.conn->postSend(&r));
      } else if (st.kind == Schedule::Kind::kRecv) {
        r = Request{st.dst, st.n, s_.comm_.nextRecvTag(peer), false};
        MYR_TRY(lane.conn->postRecv(&r));
      } else if (lane.conn->combinesOnReceive()) {
        r = Request{st.dst, st.n, s_.comm_.nextRecvTag(peer), false};
        r.combine = Combine{st.b, st.dtype, st.op};
        MYR_TRY(lane.conn->postRecv(&r));
      } else {
        r = Request{st.staging, st.n, s_.comm_.nextRecvTag(peer), false};  // reduced by reap()
        MYR_TRY(lane.conn->postRecv(&r));
      }
    }
    return Status::ok();
  }

  void reap(Queue& q) {
    while (q.completed < q.posted && reqs_[static_cast<size_t>(q.queue[q.completed])].done) {
      Step i = q.queue[q.completed++];
      const auto& st = s_.steps_[static_cast<size_t>(i)];
      const Request& r = reqs_[static_cast<size_t>(i)];
      if (st.kind == Schedule::Kind::kRecvReduce && !r.combine.with)  // landed in staging
        reduce(st.dst, st.staging, st.b, st.n / dtypeSize(st.dtype), st.dtype, st.op);
      complete(i);
    }
  }

  Schedule s_;
  const char* name_;
  std::vector<int32_t> waiting_;  // unfinished dependencies per step
  std::vector<std::vector<Step>> dependents_;
  std::vector<Request> reqs_;
  std::vector<Lane> lanes_;  // by peer rank
  std::vector<int> active_;  // peers with message steps
  std::vector<Step> computeReady_;
  size_t completed_ = 0;
};

Result<std::unique_ptr<Task>> Schedule::build(const char* algorithm) {
  auto t = std::make_unique<ScheduleTask>(std::move(*this), algorithm);
  MYR_TRY(t->init());
  return std::unique_ptr<Task>(std::move(t));
}

namespace {

class StagedTask final : public Task {
 public:
  StagedTask(std::unique_ptr<Task> first, std::function<Result<std::unique_ptr<Task>>()> next)
      : first_(std::move(first)), next_(std::move(next)) {}
  Status start() override { return first_->start(); }
  Status progress(bool* done) override {
    *done = false;
    if (!second_) {
      bool firstDone = false;
      MYR_TRY(first_->progress(&firstDone));
      if (!firstDone) return Status::ok();
      MYR_ASSIGN_OR_RETURN(second_, next_());
      MYR_TRY(second_->start());
    }
    return second_->progress(done);
  }

 private:
  std::unique_ptr<Task> first_, second_;
  std::function<Result<std::unique_ptr<Task>>()> next_;
};

}  // namespace

std::unique_ptr<Task> staged(std::unique_ptr<Task> first, std::function<Result<std::unique_ptr<Task>>()> next) {
  return std::make_unique<StagedTask>(std::move(first), std::move(next));
}

}  // namespace myriad
