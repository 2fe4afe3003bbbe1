// What a communicator checks while an executor waits without progress, at rates the executor bounds: the
// liveness of the peers waited on, the silence deadline (MYRIAD_TIMEOUT_MS), and the store's abort notice,
// through which a failure seen by one rank reaches every rank. Silence is blamed on the rank at the end of
// the chain of waiters (core/blame.cc), not on the nearest one.
#include "base/wire.h"
#include "core/comm.h"

namespace myriad {

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
  if (quietest && longest > config_.timeoutMs) return blameSilence(quietest->peer().rank, longest);
  if (quietest && 2 * longest > config_.timeoutMs) publishStall(quietest->peer().rank);
  if (!checkStore) return Status::ok();
  auto notice = store_->tryGet("abort");
  if (notice.isOk()) return learnedFailure(notice.value());
  if (notice.status().code() != Code::kNotSupported) {
    std::string owner = storeOwner_.empty() ? "its host process" : storeOwner_;
    return Status(Code::kRemoteError, "rank " + std::to_string(rank_) + ": lost the rendezvous store, hosted by " +
                                          owner + ", which has probably exited: " + notice.status().message());
  }
  return Status::ok();
}

Status Comm::learnedFailure(const Bytes& notice) {
  Reader r(notice);
  std::string text = r.str(1 << 16);
  // Learned, not detected here: recorded without publishing again.
  return errors_.fail(Status(Code::kRemoteError, "rank " + std::to_string(rank_) + ": communicator aborted: " + text));
}

Status Comm::failDetected(Status detected) {
  if (errors_.aborted()) return errors_.fail(detected);
  // A peer that vanished or hung up may only be reacting to an earlier failure elsewhere (survivors exit
  // once they have their error): when another rank has already published a root cause, report that one.
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
