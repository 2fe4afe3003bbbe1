// What a communicator checks while an executor waits without progress, at rates the executor bounds: the
// liveness of the connections waited on, whom this rank waits on (told to the others through the liveness
// channel), the judgement of the stall (core/stall.cc: dead, left, late or stuck), and the store's abort
// notice, through which a failure seen by one rank also reaches every rank. Without the liveness channel
// silence is the only sign: after MYRIAD_TIMEOUT_MS it is blamed on the rank at the end of the chain of
// waiters published in the store (core/blame.cc).
#include <thread>

#include "base/wire.h"
#include "core/comm.h"

namespace myriad {
namespace {

// How long a hang-up waits for a root cause on the liveness channel: several hops of a flood, far below
// the seconds a death takes to be declared.
constexpr int kRootCauseGraceMs = 250;

}  // namespace

Status Comm::checkWhileStalled(bool checkStore) {
  auto now = Clock::now();
  Connection* quietest = nullptr;
  long long longest = -1;
  for (Connection* c : open_) {
    if (!c->busy()) continue;
    MYR_TRY(c->checkAlive().addContext("rank " + std::to_string(rank_)));
    auto silentMs = std::chrono::duration_cast<std::chrono::milliseconds>(now - c->lastProgress()).count();
    if (silentMs > longest) longest = silentMs, quietest = c;
  }
  if (quietest) {
    const int peer = quietest->peer().rank;
    flight_->noteWait(peer, longest);  // whom this call waits on: for the dumps and the liveness channel
    if (liveness_) {
      MYR_TRY(judgeStall(peer, longest));
    } else {
      if (longest > config_.timeoutMs) return blameSilence(peer, longest);
      if (2 * longest > config_.timeoutMs) publishStall(peer);
    }
  }
  // With the liveness channel, failures travel over it: the store, which may be gone, is not read.
  if (!checkStore || liveness_) return Status::ok();
  auto notice = store_->tryGet("abort");
  if (notice.isOk()) return learnedFailure(notice.value());
  if (notice.status().code() == Code::kNotSupported) return Status::ok();
  std::string owner = storeOwner_.empty() ? "its host process" : storeOwner_;
  return Status(Code::kRemoteError, "rank " + std::to_string(rank_) + ": lost the rendezvous store, hosted by " +
                                        owner + ", which has probably exited: " + notice.status().message());
}

Status Comm::learnedFailure(const Bytes& notice) {
  Reader r(notice);
  std::string text = r.str(1 << 16);
  // Learned, not detected here: recorded without publishing again.
  return errors_.fail(Status(Code::kRemoteError, "rank " + std::to_string(rank_) + ": communicator aborted: " + text));
}

Status Comm::failDetected(Status detected) {
  if (errors_.aborted()) return errors_.fail(detected);
  // A peer that vanished or hung up may only be reacting to an earlier failure elsewhere: survivors exit once
  // they have their error, and the one that exits first turns the others' next connect or read into "refused"
  // or "reset". Such a survivor announced its root cause before it could exit, so with the liveness channel
  // the cause is at most a few datagram hops behind the hang-up: wait for it briefly (this rank fails either
  // way; only the error's text is at stake). Without the channel, the store holds the first cause.
  if (liveness_) {
    if (detected.code() == Code::kRemoteError) {
      const auto until = Clock::now() + std::chrono::milliseconds(kRootCauseGraceMs);
      while (!errors_.aborted() && Clock::now() < until) std::this_thread::sleep_for(std::chrono::milliseconds(2));
      if (errors_.aborted()) return errors_.fail(detected);
    }
    return fail(std::move(detected));
  }
  auto notice = store_->tryGet("abort");
  if (notice.isOk()) return learnedFailure(notice.value());
  return fail(std::move(detected));
}

Status Comm::usable() const {
  if (!errors_.aborted()) return Status::ok();
  Status first = errors_.first();
  return first.isOk() ? Status(Code::kRemoteError, "rank " + std::to_string(rank_) + ": communicator was aborted")
                      : first;
}

}  // namespace myriad
