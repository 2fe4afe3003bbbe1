// HostExecutor — the host's wait policy around a ScheduleRun. It spins while bytes move; when they stop it
// sleeps on the transports' wake-up hook if every connection it waits on rings the same one (with more ranks
// than cores, after yielding the core for a while; otherwise after spinning on for as long as no other task
// wants a CPU), else yields and then naps briefly. While stalled it asks the communicator, at bounded rates,
// to check the abort flag, the liveness of the peers it waits on, the silence deadline and the store's
// abort notice (core/comm_watch.cc).
#include "exec/host_executor.h"

#include <sched.h>

#include <algorithm>
#include <thread>

#include "exec/schedule_run.h"

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
constexpr size_t kMaxHooks = 4;  // transports with a wake-up hook (shm has one)
}  // namespace

namespace {

// The communicator's resources as a ScheduleRun needs them.
class CommContext final : public RunContext {
 public:
  explicit CommContext(Comm& comm) : comm_(comm) {}
  int rank() const override { return comm_.rank(); }
  int nranks() const override { return comm_.nranks(); }
  Result<Connection*> connection(int peer) override { return comm_.connection(peer); }
  uint32_t nextSendTag(int peer) override { return comm_.nextSendTag(peer); }
  uint32_t nextRecvTag(int peer) override { return comm_.nextRecvTag(peer); }
  Result<uint8_t*> scratch(size_t bytes) override {
    void* p = comm_.scratch(std::max<size_t>(bytes, 1));
    if (!p) return Status(Code::kSystemError, "cannot map " + std::to_string(bytes) + " bytes of scratch memory");
    return static_cast<uint8_t*>(p);
  }

 private:
  Comm& comm_;
};

}  // namespace

Status HostExecutor::execute(Schedule schedule, const CollArgs& args) {
  MYR_TRY(comm_.usable());
  CommContext ctx(comm_);
  ScheduleRun run(std::move(schedule), args, ctx);
  Status s = run.init();
  if (!s.isOk()) return comm_.fail(s);
  return drive(run);
}

Status HostExecutor::drive(Task& task) {
  Status s = task.start();
  if (!s.isOk()) return comm_.fail(s);
  const bool oversubscribed = comm_.oversubscribed();
  const auto& open = comm_.openConnections();
  const auto& hooks = comm_.wakeHooks();
  ErrorState& errors = comm_.errors();
  auto lastLiveness = Clock::now();
  auto lastStore = Clock::now();
  const auto spinFor = oversubscribed ? kSpinQuietOversubscribed : kSpinQuiet;
  const Clock::duration yieldFor =
      oversubscribed ? Clock::duration(kYieldBeforeBellOversubscribed) : Clock::duration::zero();
  uint32_t seen[kMaxHooks] = {};
  while (true) {
    // Read before polling: a ring that lands after this read makes the sleep below return at once.
    for (size_t i = 0; i < hooks.size() && i < kMaxHooks; ++i) seen[i] = hooks[i]->seq();
    // Connections with work of their own (acks to send, lanes to replace) are polled before the task, so
    // that a request they complete is seen by this round's progress, not after a sleep. A busy one is
    // polled by the task itself (it has requests of the task's in flight): once per round is enough.
    for (Connection* c : open) {
      if (!c->hasBackgroundWork() || c->busy()) continue;
      s = c->poll();
      if (!s.isOk()) return comm_.failDetected(std::move(s));
    }
    bool done = false;
    s = task.progress(&done);
    if (!s.isOk()) return comm_.failDetected(std::move(s));
    if (done) {
      comm_.clearStall();
      return Status::ok();
    }
    if (errors.aborted()) return comm_.usable();
    Clock::time_point latest{};
    // Sleepable when every connection waited on rings one and the same hook.
    WakeHook* hook = nullptr;
    bool anyBusy = false, sleepable = true;
    for (Connection* c : open) {
      if (!c->busy()) continue;
      if (c->lastProgress() > latest) latest = c->lastProgress();
      WakeHook* h = c->wakeHook();
      sleepable = sleepable && h && (!anyBusy || h == hook);
      hook = h;
      anyBusy = true;
    }
    sleepable = sleepable && anyBusy;
    auto now = Clock::now();
    auto quiet = now - latest;
    if (quiet < spinFor) {
      comm_.clearStall();  // bytes move again: no longer waiting on anyone
      continue;
    }
    if (now - lastLiveness >= kLivenessEvery) {
      bool storeDue = now - lastStore >= kStoreEvery;
      if (storeDue) lastStore = now;
      lastLiveness = now;
      s = comm_.checkWhileStalled(storeDue);
      if (!s.isOk()) return errors.aborted() ? comm_.usable() : comm_.failDetected(std::move(s));
    }
    if (sleepable && quiet >= yieldFor) {
      // Nobody wants this core: spinning on costs nobody anything and spares the sleep and wake-up.
      if (!oversubscribed && quiet < kSpinWhileCpusFree && !comm_.cpuWaiters().any(now)) continue;
      size_t i = static_cast<size_t>(std::find(hooks.begin(), hooks.end(), hook) - hooks.begin());
      if (i < kMaxHooks && i < hooks.size()) hook->sleep(seen[i], kBellSleepUs);
    } else if (quiet < kYieldQuiet)
      sched_yield();
    else
      std::this_thread::sleep_for(kSleep);
  }
}

}  // namespace myriad
