// FlightRecorder: the ring of a communicator's last calls. One mutex guards it all; it is taken a few times
// per call by the executing thread and, rarely, by a reader (a dump, a stall report), so it is uncontended
// on the hot path.
#include "core/flight_record.h"

#include <time.h>

#include <algorithm>

#include "plan/coll_args.h"
#include "plan/schedule.h"

namespace myriad {
namespace {

// The kernel's coarse monotonic clock: the time base of Clock (CLOCK_MONOTONIC) at a tick's resolution (1-4
// ms) for a quarter of the cost (about 10 ns instead of 40 here, where two reads were most of a record's
// cost on an 8-byte all-reduce). A record serves hangs, not profiling; it never runs ahead of Clock::now().
Clock::time_point coarseNow() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
  return Clock::time_point(std::chrono::duration_cast<Clock::duration>(std::chrono::seconds(ts.tv_sec) +
                                                                       std::chrono::nanoseconds(ts.tv_nsec)));
}

const char* opOf(const CollArgs& a) {
  if (a.kind == CollKind::kAllToAll && !a.sendCounts.empty()) return "alltoallv";
  if (a.kind != CollKind::kSendRecv) return collName(a.kind);
  bool sends = false, recvs = false;
  for (const P2pCall& p : a.p2p) (p.send ? sends : recvs) = true;
  if (sends && recvs) return "sendrecv";
  return sends ? "send" : "recv";
}

bool hasRoot(CollKind k) {
  return k == CollKind::kBroadcast || k == CollKind::kReduce || k == CollKind::kGather || k == CollKind::kScatter;
}

}  // namespace

FlightRecorder::FlightRecorder(int capacity, int nranks)
    : ring_(static_cast<size_t>(capacity > 0 ? capacity : 0)),
      byPeer_(static_cast<size_t>(nranks > 0 ? nranks : 0)),
      seen_(byPeer_.size(), 0) {
  touched_.reserve(byPeer_.size());
}

CallRecord* FlightRecorder::slotOf(uint64_t seq) {
  if (ring_.empty() || seq == 0 || seq + ring_.size() <= state_.seq) return nullptr;
  return &ring_[(seq - 1) % ring_.size()];
}

uint64_t FlightRecorder::begin(const CollArgs& args, const char* algorithm, bool device) {
  const auto now = coarseNow();
  const char* op = opOf(args);
  std::lock_guard<std::mutex> lock(mu_);
  state_.seq += 1;
  state_.inCall = true;
  state_.op = op;
  state_.count = args.count;
  state_.dtype = args.dtype;
  state_.entered = now;
  state_.finished = {};
  wait_ = {};
  waiting_.store(false, std::memory_order_relaxed);
  CallRecord* r = slotOf(state_.seq);
  if (!r) return state_.seq;
  // Assigned field by field: the slot's vector and string keep their capacity from earlier calls.
  r->seq = state_.seq;
  r->op = op;
  r->count = args.count;
  r->dtype = args.dtype;
  r->redop = args.op;
  r->root = hasRoot(args.kind) ? args.root : -1;
  r->algorithm = algorithm;
  r->device = device;
  r->peers.clear();
  r->start = now;
  r->finished = {};
  r->open = true;
  r->code = Code::kSuccess;
  r->error.clear();
  r->lastWait = {};
  return state_.seq;
}

void FlightRecorder::planned(uint64_t seq, const Schedule& schedule) {
  if (ring_.empty()) return;
  // Summed outside the lock: byPeer_, seen_ and touched_ belong to the executing thread.
  for (const Schedule::StepInfo& s : schedule.steps()) {
    if (!Schedule::isMessage(s.kind) || s.peer < 0 || static_cast<size_t>(s.peer) >= byPeer_.size()) continue;
    const auto i = static_cast<size_t>(s.peer);
    if (!seen_[i]) {
      seen_[i] = 1;
      touched_.push_back(s.peer);
    }
    (s.kind == Schedule::Kind::kSend ? byPeer_[i].sendBytes : byPeer_[i].recvBytes) += s.n;
  }
  std::lock_guard<std::mutex> lock(mu_);
  CallRecord* r = slotOf(seq);
  for (int peer : touched_) {
    const auto i = static_cast<size_t>(peer);
    if (r) r->peers.push_back(PeerBytes{peer, byPeer_[i].sendBytes, byPeer_[i].recvBytes});
    byPeer_[i] = {};
    seen_[i] = 0;
  }
  touched_.clear();
}

void FlightRecorder::end(uint64_t seq, const Status& s) {
  const auto now = coarseNow();
  std::lock_guard<std::mutex> lock(mu_);
  if (seq == state_.seq) {
    state_.inCall = false;
    state_.finished = now;
    wait_ = {};
    waiting_.store(false, std::memory_order_relaxed);
  }
  CallRecord* r = slotOf(seq);
  if (!r) return;
  r->finished = now;
  r->open = false;
  r->code = s.code();
  if (!s.isOk()) r->error = s.message();
}

void FlightRecorder::noteWait(int peer, long long silentMs) {
  const auto since = Clock::now() - std::chrono::milliseconds(silentMs > 0 ? silentMs : 0);
  std::lock_guard<std::mutex> lock(mu_);
  if (!state_.inCall) return;
  wait_ = WaitState{peer, since};
  waiting_.store(true, std::memory_order_relaxed);
  if (CallRecord* r = slotOf(state_.seq)) r->lastWait = wait_;
}

void FlightRecorder::clearWait() {
  if (!waiting_.load(std::memory_order_relaxed)) return;
  std::lock_guard<std::mutex> lock(mu_);
  wait_ = {};
  waiting_.store(false, std::memory_order_relaxed);
}

CallState FlightRecorder::state() const {
  std::lock_guard<std::mutex> lock(mu_);
  return state_;
}

WaitState FlightRecorder::wait() const {
  std::lock_guard<std::mutex> lock(mu_);
  return wait_;
}

FlightSnapshot FlightRecorder::snapshot() const {
  std::lock_guard<std::mutex> lock(mu_);
  FlightSnapshot out;
  out.capacity = static_cast<int>(ring_.size());
  out.state = state_;
  out.wait = wait_;
  if (ring_.empty()) return out;
  const uint64_t kept = std::min<uint64_t>(state_.seq, ring_.size());
  out.records.reserve(kept);
  for (uint64_t seq = state_.seq - kept + 1; seq <= state_.seq; ++seq)
    out.records.push_back(ring_[(seq - 1) % ring_.size()]);
  return out;
}

}  // namespace myriad
