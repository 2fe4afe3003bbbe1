// Comm::run — the executor loop. It spins while bytes move; when they stop it sleeps on its shared-memory
// doorbell if every connection it waits on rings it (with more ranks than cores, after yielding the core
// for a while; otherwise after spinning on for as long as no other task wants a CPU), else yields and
// then sleeps briefly. While stalled it checks, at bounded rates: the abort
// flag, the liveness of the peers it waits on, the silence deadline (MYRIAD_TIMEOUT_MS), and the store's
// abort notice, through which a failure seen by one rank reaches every rank within a fraction of a second.
// Silence is blamed on the rank at the end of the chain of waiters (core/blame.cc), not on the nearest one.
#include <sched.h>

#include <thread>

#include "core/comm.h"
#include "core/wire.h"
#include "transports/shm/shm_transport.h"

namespace myriad {
namespace {
// A quiet shared-memory wait spins this long, then on only while no task waits for a CPU (see
// kSpinWhileCpusFree). 2 ranks on 2 cores beside one unrelated busy task, all-reduce 1 KiB-1 MiB, 3
// interleaved runs: 59-361 us per call spinning 50 us before sleeping, 17-205 us spinning 10 us (the
// probe then says the peer may be the task that waits for this core); 4-64 MiB 2.9-3.7 against 3.9-4.8
// GB/s busbw. Without the busy task both alike (0.8-70 us; 8-21 GB/s).
constexpr auto kSpinQuiet = std::chrono::microseconds(10);
constexpr auto kSpinQuietOversubscribed = std::chrono::microseconds(2);
constexpr int kBellSleepUs = 1000;  // bounded, so that deadlines and liveness are still checked
// With more ranks than cores, shared-memory waits yield the core this long before they sleep on the
// doorbell: the rank that will ring is usually runnable and waiting for this core, and a futex sleep and
// wake-up costs more than a small collective. 4 ranks on 2 cores, all-reduce, medians of 5 interleaved
// runs: 1-64 KiB took 71-140 us sleeping at once, 14-78 us yielding (50 us to 1 ms all alike); larger
// sizes were too noisy to tell. Not without oversubscription: there the yield only lets unrelated tasks
// in (2 ranks, 1 KiB-4 MiB: 1.5-617 us without it, 2.5-804 us with it).
constexpr auto kYieldBeforeBellOversubscribed = std::chrono::microseconds(200);
// Without more ranks than cores, a quiet shared-memory wait keeps spinning past kSpinQuiet while no task on
// the host waits for a CPU (core/cpu_waiters.h), up to this long.
constexpr auto kSpinWhileCpusFree = std::chrono::milliseconds(2);
constexpr auto kYieldQuiet = std::chrono::milliseconds(2);
constexpr auto kSleep = std::chrono::microseconds(50);
constexpr auto kLivenessEvery = std::chrono::milliseconds(50);
constexpr auto kStoreEvery = std::chrono::milliseconds(200);
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

Status Comm::run(Task& task) {
  MYR_TRY(usable());
  Status s = task.start();
  if (!s.isOk()) return fail(s);
  auto lastLiveness = Clock::now();
  auto lastStore = Clock::now();
  const auto spinFor = oversubscribed_ ? kSpinQuietOversubscribed : kSpinQuiet;
  const Clock::duration yieldFor =
      oversubscribed_ ? Clock::duration(kYieldBeforeBellOversubscribed) : Clock::duration::zero();
  while (true) {
    // Read before polling: a ring that lands after this read makes the sleep below return at once.
    uint32_t bell = shm_->bellSeq();
    // Connections with work of their own (acks to send, lanes to replace) are polled before the task, so
    // that a request they complete is seen by this round's progress, not after a sleep.
    for (Connection* c : open_) {
      if (!c->hasBackgroundWork()) continue;
      s = c->poll();
      if (!s.isOk()) return failDetected(std::move(s));
    }
    bool done = false;
    s = task.progress(&done);
    if (!s.isOk()) return failDetected(std::move(s));
    if (done) {
      clearStall();
      return Status::ok();
    }
    if (errors_.aborted()) return usable();
    Clock::time_point latest{};
    bool anyBusy = false, sleepable = true;
    for (Connection* c : open_) {
      if (!c->busy()) continue;
      anyBusy = true;
      if (c->lastProgress() > latest) latest = c->lastProgress();
      sleepable = sleepable && c->sleepable();
    }
    sleepable = sleepable && anyBusy;  // the bell wakes us for shm peers only, and none is awaited
    auto now = Clock::now();
    auto quiet = now - latest;
    if (quiet < spinFor) {
      clearStall();  // bytes move again: no longer waiting on anyone
      continue;
    }
    if (now - lastLiveness >= kLivenessEvery) {
      bool storeDue = now - lastStore >= kStoreEvery;
      if (storeDue) lastStore = now;
      lastLiveness = now;
      s = checkWhileStalled(storeDue);
      if (!s.isOk()) return errors_.aborted() ? errors_.first() : failDetected(std::move(s));
    }
    if (sleepable && quiet >= yieldFor) {
      // Nobody wants this core: spinning on costs nobody anything and spares the sleep and wake-up.
      if (!oversubscribed_ && quiet < kSpinWhileCpusFree && !cpuWaiters_.any(now)) continue;
      shm_->sleep(bell, kBellSleepUs);
    } else if (quiet < kYieldQuiet)
      sched_yield();
    else
      std::this_thread::sleep_for(kSleep);
  }
}

}  // namespace myriad
