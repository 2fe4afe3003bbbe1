// The communicator's side of the liveness channel: starting it once the peers are known, what this rank
// says of itself, and what a rank's death does here (the communicator fails at once, in the running call
// and every later one, and device waits are released).
#include <algorithm>
#include <climits>

#include "base/log.h"
#include "core/comm.h"
#include "plan/dtype.h"

namespace myriad {

void Comm::startLiveness() {
  if (!liveness_) return;
  Liveness::Options o;
  o.rank = rank_;
  o.nranks = nranks_;
  o.peers = &peers_;
  o.commKey = Liveness::commKey(secret_.data(), secret_.size(), commTag_);
  o.tagKey = Liveness::tagKey(secret_.data(), secret_.size(), commTag_);
  o.heartbeatMs = config_.heartbeatMs;
  o.deadMs = config_.peerDeadMs;
  o.self = [this] { return selfState(); };
  o.onFate = [this](const liveness::Fate& f) { heardFate(f); };
  liveness_->start(std::move(o));
}

liveness::SelfState Comm::selfState() const {
  const CallState call = flight_->state();
  const WaitState wait = flight_->wait();
  auto ms = [](Clock::time_point t) { return static_cast<uint32_t>(std::clamp<int64_t>(msSince(t), 0, UINT32_MAX)); };
  liveness::SelfState s;
  s.seq = call.seq;
  s.inCall = call.inCall;
  s.op = call.op;
  s.count = call.count;
  s.dtype = dtypeName(call.dtype);
  if (call.seq > 0) s.sinceMs = ms(call.inCall ? call.entered : call.finished);
  if (call.inCall && wait.peer >= 0) {
    s.waitsOn = wait.peer;
    s.quietMs = ms(wait.since);
  }
  return s;
}

void Comm::heardFate(const liveness::Fate& f) {
  if (f.kind == liveness::FateKind::kLeft) {
    // Not a failure: only a call that still waits on it fails (core/stall.cc).
    MYR_LOG(kInfo, kInit, rank_, f.text);
    return;
  }
  const std::string text = f.rank == rank_ ? "the other ranks count this rank as failed: " + f.text : f.text;
  const bool first = !errors_.aborted();
  errors_.fail(Status(Code::kRemoteError, "rank " + std::to_string(rank_) + ": " + text)).ignore();
  if (first) MYR_LOG(kWarn, kColl, rank_, text);
  std::lock_guard<std::mutex> lock(deviceMu_);
  if (device_) device_->releaseWaits();
}

}  // namespace myriad
