// The watch over device work: nobody waits on the host while a stream waits on a peer, so a thread of the
// communicator does what the host executor's loop does while stalled. While a call is unfinished on the
// device (its end event), every 100 ms it checks that the
// processes it has device channels to still exist (they are on this host), and every 500 ms the store's
// abort notice (a failure another rank detected, published by Comm::fail). Either way the communicator fails
// with an error naming the cause (myrCommGetAsyncError) and every device wait of this rank is released, so
// no stream stays blocked on a dead peer; streams then finish with undefined results.
#include <signal.h>

#include <cerrno>

#include "core/comm.h"

namespace myriad {

void Comm::watchDevice() {
  std::unique_lock<std::mutex> lock(deviceMu_);
  for (int turn = 1;; ++turn) {
    deviceWatchCv_.wait_for(lock, std::chrono::milliseconds(100), [this] { return stopDeviceWatch_; });
    if (stopDeviceWatch_) return;
    if (errors_.aborted()) {
      device_->releaseWaits();
      continue;
    }
    Status found;
    // A peer that exits while nothing is enqueued (a job ending, a peer done with its point-to-point calls)
    // is no failure: only one that device work may be waiting on.
    if (!device_->busy()) continue;
    for (int p : device_->channelPeers()) {
      const PeerInfo& peer = peers_[static_cast<size_t>(p)];
      if (kill(peer.pid, 0) != 0 && errno == ESRCH) {
        found = Status(Code::kRemoteError, "rank " + std::to_string(rank_) + ": " + peer.describe() +
                                               " has exited (process no longer exists) while device work of this "
                                               "communicator may wait on it");
        break;
      }
    }
    if (found.isOk() && !liveness_ && turn % 5 == 0) {
      lock.unlock();  // the store may take its deadline to answer
      auto notice = store_->tryGet("abort");
      lock.lock();
      if (notice.isOk()) found = learnedFailure(notice.value());
    }
    if (found.isOk()) continue;
    lock.unlock();
    failDetected(found).ignore();
    lock.lock();
    if (device_) device_->releaseWaits();
  }
}

void Comm::stopWatchingDevice() {
  {
    std::lock_guard<std::mutex> lock(deviceMu_);
    stopDeviceWatch_ = true;
  }
  deviceWatchCv_.notify_all();
  if (deviceWatch_.joinable()) deviceWatch_.join();
}

}  // namespace myriad
