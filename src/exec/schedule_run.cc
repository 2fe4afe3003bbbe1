// ScheduleRun: dependency counting over the step list, per-peer in-order posting, and the second stage of
// two-stage plans. Dependents are kept in one flat array (CSR), so a run allocates a few vectors, not one
// per step; progress() visits only the lanes that have work (activeLanes_), so its cost follows the
// messages in flight, not the number of peers.
#include "exec/schedule_run.h"

#include <cstring>
#include <string>
#include <unordered_map>

#include "base/log.h"
#include "exec/reduce.h"
#include "plan/dtype.h"

namespace myriad {

ScheduleRun::ScheduleRun(Schedule schedule, const CollArgs& args, RunContext& ctx)
    : s_(std::move(schedule)), args_(args), ctx_(ctx) {}

// A run dropped before it finished (its call failed) logs where each of its lanes stood: the first thing to
// read when a schedule hangs.
ScheduleRun::~ScheduleRun() {
  if (completed_ != waiting_.size()) logStopped();
}

void ScheduleRun::logStopped() const {
  std::string o = s_.name() + " stopped after " + std::to_string(completed_) + " of " +
                  std::to_string(waiting_.size()) + " steps; messages posted/done/planned:";
  for (const Lane& l : lanes_) {
    o += " rank " + std::to_string(l.conn->peer().rank) + " send " + std::to_string(l.sends.posted) + "/" +
         std::to_string(l.sends.completed) + "/" + std::to_string(l.sends.queue.size()) + " recv " +
         std::to_string(l.recvs.posted) + "/" + std::to_string(l.recvs.completed) + "/" +
         std::to_string(l.recvs.queue.size()) + ";";
  }
  MYR_LOG(kInfo, kColl, ctx_.rank(), o);
}

std::string ScheduleRun::describeStep(Step i) const {
  const auto& st = s_.steps()[static_cast<size_t>(i)];
  std::string o = "step " + std::to_string(i) + " ";
  switch (st.kind) {
    case Schedule::Kind::kSend:
      return o + "send to rank " + std::to_string(st.peer) + " (" + std::to_string(st.n) + " B)";
    case Schedule::Kind::kRecv:
      return o + "recv from rank " + std::to_string(st.peer) + " (" + std::to_string(st.n) + " B)";
    case Schedule::Kind::kRecvReduce:
      return o + "recv-reduce from rank " + std::to_string(st.peer) + " (" + std::to_string(st.n) + " B)";
    case Schedule::Kind::kReduce: return o + "reduce";
    case Schedule::Kind::kCopy: return o + "copy";
    case Schedule::Kind::kScale: return o + "scale";
    case Schedule::Kind::kJoin: return o + "join";
  }
  return o;
}

std::string ScheduleRun::pending(size_t maxLines) const {
  if (completed_ == waiting_.size()) return "";
  std::string o =
      s_.name() + ": " + std::to_string(completed_) + " of " + std::to_string(waiting_.size()) + " steps done";
  size_t lines = 0, more = 0;
  auto add = [&](const std::string& line) { lines++ < maxLines ? void(o += "\n    " + line) : void(++more); };
  auto waitsFor = [&](Step i) {
    std::string w;
    for (Step d : s_.deps(i))
      if (!done_[static_cast<size_t>(d)]) w += (w.empty() ? "" : ", ") + describeStep(d);
    return w;
  };
  for (const Lane& l : lanes_)
    for (const Queue* q : {&l.sends, &l.recvs}) {
      if (q->completed == q->queue.size()) continue;
      Step i = q->queue[q->completed];
      add(describeStep(i) + (q->completed < q->posted ? ": posted, not done (the peer has not matched it)"
                                                      : ": not posted, waits for " + waitsFor(i)));
    }
  for (size_t i = 0; i < waiting_.size(); ++i) {
    const auto& st = s_.steps()[i];
    if (done_[i] || Schedule::isMessage(st.kind) || waiting_[i] == 0) continue;
    add(describeStep(static_cast<Step>(i)) + ": waits for " + waitsFor(static_cast<Step>(i)));
  }
  if (more) o += "\n    ... and " + std::to_string(more) + " more";
  return o;
}

Status ScheduleRun::bind() {
  bases_.assign(BufRef::kUser + args_.p2p.size(), nullptr);
  bases_[BufRef::kSend] = const_cast<uint8_t*>(static_cast<const uint8_t*>(args_.sendbuff));
  bases_[BufRef::kRecv] = static_cast<uint8_t*>(args_.recvbuff);
  if (s_.scratchBytes()) {
    MYR_ASSIGN_OR_RETURN(bases_[BufRef::kScratch], ctx_.scratch(s_.scratchBytes()));
  }
  local_ = s_.localBytes();
  bases_[BufRef::kLocal] = local_.data();
  for (size_t i = 0; i < args_.p2p.size(); ++i) bases_[BufRef::kUser + i] = static_cast<uint8_t*>(args_.p2p[i].buf);
  return Status::ok();
}

Status ScheduleRun::init() {
  MYR_TRY(bind());
  const auto& steps = s_.steps();
  size_t n = steps.size();
  waiting_.assign(n, 0);
  done_.assign(n, 0);
  dependentsAt_.assign(n + 1, 0);
  reqs_.assign(n, Request{});
  lanes_.clear();
  activeLanes_.clear();
  laneOf_.assign(n, -1);
  computeReady_.clear();
  completed_ = 0;
  for (size_t i = 0; i < n; ++i)
    for (Step d : s_.deps(static_cast<Step>(i))) ++dependentsAt_[static_cast<size_t>(d) + 1];
  for (size_t i = 0; i < n; ++i) dependentsAt_[i + 1] += dependentsAt_[i];
  dependents_.assign(static_cast<size_t>(dependentsAt_[n]), 0);
  std::vector<int32_t> fill(dependentsAt_.begin(), dependentsAt_.end() - 1);
  std::unordered_map<int, size_t> laneOf;
  const int nranks = ctx_.nranks(), rank = ctx_.rank();
  for (size_t i = 0; i < n; ++i) {
    const auto& st = steps[i];
    waiting_[i] = st.numDeps;
    for (Step d : s_.deps(static_cast<Step>(i)))
      dependents_[static_cast<size_t>(fill[static_cast<size_t>(d)]++)] = static_cast<Step>(i);
    for (const BufRef* b : {&st.dst, &st.a, &st.b, &st.staging})
      if (b->valid() && b->base >= bases_.size())
        return internalError(s_.name() + ": step " + std::to_string(i) + " uses buffer " + bufName(*b) +
                             ", which this call does not have");
    if (!Schedule::isMessage(st.kind)) continue;
    if (st.peer < 0 || st.peer >= nranks || st.peer == rank)
      return internalError(s_.name() + ": message step to bad peer " + std::to_string(st.peer));
    auto [it, fresh] = laneOf.emplace(st.peer, lanes_.size());
    if (fresh) {
      lanes_.emplace_back();
      MYR_ASSIGN_OR_RETURN(lanes_.back().conn, ctx_.connection(st.peer));
    }
    Lane& lane = lanes_[it->second];
    laneOf_[i] = static_cast<int32_t>(it->second);
    (st.kind == Schedule::Kind::kSend ? lane.sends : lane.recvs).queue.push_back(static_cast<Step>(i));
  }
  return Status::ok();
}

Status ScheduleRun::start() {
  for (size_t i = 0; i < waiting_.size(); ++i)
    if (waiting_[i] == 0) ready(static_cast<Step>(i));
  return Status::ok();
}

Status ScheduleRun::progress(bool* done) {
  settled_ = false;
  for (int round = 0; round < 8; ++round) {
    size_t before = completed_;
    runCompute();
    // Lanes activated while reaping (their next message became ready) are appended and visited this round.
    for (size_t k = 0; k < activeLanes_.size();) {
      Lane& lane = lanes_[static_cast<size_t>(activeLanes_[k])];
      MYR_TRY(postReady(lane, lane.sends, true));
      MYR_TRY(postReady(lane, lane.recvs, false));
      if (lane.sends.posted > lane.sends.completed || lane.recvs.posted > lane.recvs.completed)
        MYR_TRY(lane.conn->poll());
      reap(lane.sends);
      reap(lane.recvs);
      if (needsTurn(lane)) {
        ++k;
        continue;
      }
      lane.active = false;
      activeLanes_[k] = activeLanes_.back();
      activeLanes_.pop_back();
    }
    runCompute();
    if (completed_ == before) {
      settled_ = true;
      break;
    }
  }
  *done = completed_ == waiting_.size();
  if (!*done || !s_.next()) return Status::ok();
  // The first stage is done: plan the second from what it left in the local bytes, and run it.
  MYR_ASSIGN_OR_RETURN(Schedule second, s_.next()(local_));
  s_ = std::move(second);
  MYR_TRY(init());
  MYR_TRY(start());
  return progress(done);
}

// A step whose dependencies are all done: compute steps wait in computeReady_, message steps are marked
// (waiting_ == 0), their lane is activated, and postReady posts them in order.
void ScheduleRun::ready(Step i) {
  if (Schedule::isMessage(s_.steps()[static_cast<size_t>(i)].kind)) return activate(laneOf_[static_cast<size_t>(i)]);
  computeReady_.push_back(i);
}

void ScheduleRun::activate(int32_t l) {
  Lane& lane = lanes_[static_cast<size_t>(l)];
  if (lane.active) return;
  lane.active = true;
  activeLanes_.push_back(l);
}

// Messages posted and not yet reaped, or a next message whose dependencies are done.
bool ScheduleRun::needsTurn(const Lane& lane) const {
  for (const Queue* q : {&lane.sends, &lane.recvs}) {
    if (q->posted > q->completed) return true;
    if (q->posted < q->queue.size() && waiting_[static_cast<size_t>(q->queue[q->posted])] == 0) return true;
  }
  return false;
}

void ScheduleRun::complete(Step i) {
  ++completed_;
  done_[static_cast<size_t>(i)] = 1;
  for (int32_t k = dependentsAt_[static_cast<size_t>(i)]; k < dependentsAt_[static_cast<size_t>(i) + 1]; ++k) {
    Step d = dependents_[static_cast<size_t>(k)];
    if (--waiting_[static_cast<size_t>(d)] == 0) ready(d);
  }
}

void ScheduleRun::runCompute() {
  while (!computeReady_.empty()) {
    Step i = computeReady_.back();
    computeReady_.pop_back();
    const auto& st = s_.steps()[static_cast<size_t>(i)];
    switch (st.kind) {
      case Schedule::Kind::kReduce: reduce(at(st.dst), at(st.a), at(st.b), st.n, st.dtype, st.op); break;
      case Schedule::Kind::kCopy:
        if (st.n && at(st.dst) != at(st.a)) std::memmove(at(st.dst), at(st.a), st.n);
        break;
      case Schedule::Kind::kScale: scaleAvg(at(st.dst), st.n, st.dtype, st.divisor); break;
      default: break;
    }
    complete(i);
  }
}

Status ScheduleRun::postReady(Lane& lane, Queue& q, bool send) {
  while (q.posted < q.queue.size() && waiting_[static_cast<size_t>(q.queue[q.posted])] == 0) {
    Step i = q.queue[q.posted++];
    const auto& st = s_.steps()[static_cast<size_t>(i)];
    Request& r = reqs_[static_cast<size_t>(i)];
    int peer = lane.conn->peer().rank;
    if (send) {
      r = Request{at(st.a), st.n, ctx_.nextSendTag(peer), false};
      MYR_TRY(lane.conn->postSend(&r));
    } else if (st.kind == Schedule::Kind::kRecv) {
      r = Request{at(st.dst), st.n, ctx_.nextRecvTag(peer), false};
      MYR_TRY(lane.conn->postRecv(&r));
    } else if (lane.conn->combinesOnReceive()) {
      r = Request{at(st.dst), st.n, ctx_.nextRecvTag(peer), false};
      r.combine = Combine{at(st.b), st.dtype, st.op};
      MYR_TRY(lane.conn->postRecv(&r));
    } else {
      r = Request{at(st.staging), st.n, ctx_.nextRecvTag(peer), false};  // reduced by reap()
      MYR_TRY(lane.conn->postRecv(&r));
    }
  }
  return Status::ok();
}

void ScheduleRun::reap(Queue& q) {
  while (q.completed < q.posted && reqs_[static_cast<size_t>(q.queue[q.completed])].done) {
    Step i = q.queue[q.completed++];
    const auto& st = s_.steps()[static_cast<size_t>(i)];
    const Request& r = reqs_[static_cast<size_t>(i)];
    if (st.kind == Schedule::Kind::kRecvReduce && !r.combine.with)  // landed in staging
      reduce(at(st.dst), at(st.staging), at(st.b), st.n / dtypeSize(st.dtype), st.dtype, st.op);
    complete(i);
  }
}

}  // namespace myriad
