// HostBackedDevice's streams: queues of operations run by one worker thread (its memory: host_device_memory.cc).
// Ordering: the worker runs one stream's operations strictly one after another, so the release store of a
// writeFlag follows every write of the operations before it; waits read flags with acquire loads. Only the
// worker pops operations and deletes streams, so a stream outlives any pass that visits it.
#include "device/host_device.h"

#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstring>
#include <deque>
#include <set>

#include "base/log.h"
#include "device/reduce_host.h"
#include "plan/dtype.h"

namespace myriad {
namespace {

using Clock = std::chrono::steady_clock;

// Passes that ran nothing before the worker starts sleeping, and how long it sleeps then: short while a
// wait may be about to end, longer once nothing has run for a while (a stalled device polls cheaply).
constexpr int kSpinPasses = 32;
constexpr auto kShortSleep = std::chrono::microseconds(100);
constexpr auto kLongSleep = std::chrono::microseconds(1000);
constexpr auto kLongSleepAfter = std::chrono::milliseconds(20);

uint64_t loadAcquire(const uint64_t* flag) {
  return std::atomic_ref<uint64_t>(*const_cast<uint64_t*>(flag)).load(std::memory_order_acquire);
}

}  // namespace

struct HostBackedDevice::Event {
  int id = 0;
  uint64_t enqueued = 0;  // records enqueued so far; record k is the k-th
  // Which records have run: every k < doneBelow, and those in doneAbove. Records of one event on different
  // streams may run out of order; a wait is for exactly the record it captured, as in CUDA.
  uint64_t doneBelow = 1;
  std::set<uint64_t> doneAbove;

  bool done(uint64_t k) const { return k < doneBelow || doneAbove.count(k) != 0; }
  void markDone(uint64_t k) {
    if (k != doneBelow) {
      doneAbove.insert(k);
      return;
    }
    ++doneBelow;
    while (doneAbove.erase(doneBelow) != 0) ++doneBelow;
  }
};

struct HostBackedDevice::Op {
  enum class Kind { kRecord, kWaitEvent, kWaitFlag, kWriteFlag, kCopy, kReduce, kScaleAvg };
  Kind kind = Kind::kCopy;
  std::shared_ptr<Event> event;
  uint64_t record = 0;  // kRecord: this record's number; kWaitEvent: the record awaited (0: none, no wait)
  uint64_t* flag = nullptr;
  uint64_t value = 0;
  void* dst = nullptr;
  const void* a = nullptr;
  const void* b = nullptr;
  size_t count = 0;  // bytes of a copy, elements of a kernel
  myrDataType_t dtype = myrFloat32;
  myrRedOp_t redOp = myrSum;
  int n = 1;
};

struct HostBackedDevice::Queue {
  int id = 0;
  std::string name;
  std::deque<Op> ops;    // the head runs (or is tried) first; popped only after it ran
  bool running = false;  // the head is executing with mu_ released
  bool destroyed = false;
};

HostBackedDevice::HostBackedDevice(HostDeviceOptions options)
    : options_(options),
      pid_(::getpid()),
      stallTime_(options.stallTime),
      lastProgress_(Clock::now()),
      rng_(options.orderSeed) {
  worker_ = std::thread([this] { workerLoop(); });
}

HostBackedDevice::~HostBackedDevice() {
  if (!usableHere()) {
    // A forked child holds a copy of this object but not its thread; joining would wait for nothing.
    worker_.detach();
    return;
  }
  {
    std::lock_guard<std::mutex> lk(mu_);
    stop_ = true;
  }
  workCv_.notify_all();
  doneCv_.notify_all();
  worker_.join();
  // Queued operations are discarded with streams_; then the memory goes.
  for (auto& [base, region] : regions_) {
    ::munmap(reinterpret_cast<void*>(base), region.bytes);
    if (region.fd >= 0) ::close(region.fd);
  }
}

std::string HostBackedDevice::addressText(const void* p) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%p", p);
  return buf;
}

std::string HostBackedDevice::describe() const {
  std::string pageBytes = std::to_string(::sysconf(_SC_PAGESIZE));
  std::unique_lock<std::mutex> lk(mu_);
  std::string stallMs = std::to_string(stallTime_.count());
  lk.unlock();
  return "host-backed: streams as queues run by one CPU thread, memory as memfd pages of " + pageBytes +
         " B that other processes map, reductions by the host kernels; stream order seed " +
         std::to_string(options_.orderSeed) + ", op delay up to " + std::to_string(options_.maxOpDelayUs) +
         " us, deadlock report after " + stallMs + " ms";
}

Status HostBackedDevice::checkProcess(const char* what) const {
  if (usableHere()) return Status::ok();
  return invalidUsage(std::string("host-backed device: ") + what + " in process " + std::to_string(::getpid()) +
                      ", but the device was made in process " + std::to_string(pid_) +
                      " before a fork; a forked child opens its own device (processDevice() does)");
}

// ---- streams and events ----

HostBackedDevice::Queue* HostBackedDevice::queueOf(DeviceStream* s) const {
  auto* q = reinterpret_cast<Queue*>(s);
  for (const auto& own : streams_)
    if (own.get() == q && !q->destroyed) return q;
  return nullptr;
}

Result<DeviceStream*> HostBackedDevice::createStream() {
  MYR_TRY(checkProcess("createStream"));
  std::lock_guard<std::mutex> lk(mu_);
  auto q = std::make_unique<Queue>();
  q->id = nextStreamId_++;
  q->name = "stream " + std::to_string(q->id);
  streams_.push_back(std::move(q));
  return reinterpret_cast<DeviceStream*>(streams_.back().get());
}

void HostBackedDevice::destroyStream(DeviceStream* s) {
  if (!usableHere()) return;
  std::lock_guard<std::mutex> lk(mu_);
  // As cudaStreamDestroy: work already queued still runs; the worker deletes the queue once it is empty.
  if (Queue* q = queueOf(s)) q->destroyed = true;
  kicked_ = true;
  workCv_.notify_one();
}

Result<DeviceEvent*> HostBackedDevice::createEvent() {
  MYR_TRY(checkProcess("createEvent"));
  std::lock_guard<std::mutex> lk(mu_);
  auto e = std::make_shared<Event>();
  e->id = nextEventId_++;
  events_[e.get()] = e;
  return reinterpret_cast<DeviceEvent*>(e.get());
}

void HostBackedDevice::destroyEvent(DeviceEvent* e) {
  if (!usableHere()) return;
  std::lock_guard<std::mutex> lk(mu_);
  events_.erase(reinterpret_cast<Event*>(e));  // queued records and waits keep it alive until they ran
}

void HostBackedDevice::setName(DeviceStream* s, const std::string& name) {
  std::lock_guard<std::mutex> lk(mu_);
  if (Queue* q = queueOf(s)) q->name = std::move(name);
}

void HostBackedDevice::setStallTime(std::chrono::milliseconds stallTime) {
  std::lock_guard<std::mutex> lk(mu_);
  stallTime_ = stallTime;
}

std::string HostBackedDevice::stallReport() const {
  std::lock_guard<std::mutex> lk(mu_);
  return stallReport_;
}

Status HostBackedDevice::synchronize(DeviceStream* s) {
  MYR_TRY(checkProcess("synchronize"));
  std::unique_lock<std::mutex> lk(mu_);
  Queue* q = queueOf(s);
  if (q == nullptr) return invalidArgument("host-backed device: synchronize of a stream this device does not hold");
  // A stall ends the wait only while it lasts: a flag written since (by a peer, by releaseFlag) lets it run.
  doneCv_.wait(lk, [&] { return q->ops.empty() || stop_ || (stalled_ && !anyReady()); });
  if (q->ops.empty()) return Status::ok();
  return Status(Code::kTimeout, "host-backed device: synchronize(" + q->name + ") would never return: " + stallReport_);
}

// ---- stream-ordered operations ----

Status HostBackedDevice::enqueue(DeviceStream* s, Op op) {
  std::lock_guard<std::mutex> lk(mu_);
  Queue* q = queueOf(s);
  if (q == nullptr) return invalidArgument("host-backed device: an operation on a stream this device does not hold");
  if (op.kind == Op::Kind::kRecord) op.record = ++op.event->enqueued;
  if (op.kind == Op::Kind::kWaitEvent) op.record = op.event->enqueued;  // the latest record so far, as CUDA
  if (q->ops.empty()) {
    // A new head may run: the stall clock starts again.
    lastProgress_ = Clock::now();
    stalled_ = false;
  }
  q->ops.push_back(std::move(op));
  kicked_ = true;
  workCv_.notify_one();
  return Status::ok();
}

Result<bool> HostBackedDevice::done(DeviceEvent* e) {
  MYR_TRY(checkProcess("done"));
  std::lock_guard<std::mutex> lk(mu_);
  auto it = events_.find(reinterpret_cast<Event*>(e));
  if (it == events_.end()) return invalidArgument("host-backed device: query of an event this device does not hold");
  const Event& ev = *it->second;
  return ev.enqueued == 0 || ev.done(ev.enqueued);
}

Status HostBackedDevice::record(DeviceEvent* e, DeviceStream* s) {
  MYR_TRY(checkProcess("record"));
  Op op;
  op.kind = Op::Kind::kRecord;
  {
    std::lock_guard<std::mutex> lk(mu_);
    auto it = events_.find(reinterpret_cast<Event*>(e));
    if (it == events_.end()) return invalidArgument("host-backed device: record of an event this device does not hold");
    op.event = it->second;
  }
  return enqueue(s, std::move(op));
}

Status HostBackedDevice::waitEvent(DeviceStream* s, DeviceEvent* e) {
  MYR_TRY(checkProcess("waitEvent"));
  Op op;
  op.kind = Op::Kind::kWaitEvent;
  {
    std::lock_guard<std::mutex> lk(mu_);
    auto it = events_.find(reinterpret_cast<Event*>(e));
    if (it == events_.end()) return invalidArgument("host-backed device: wait on an event this device does not hold");
    op.event = it->second;
  }
  return enqueue(s, std::move(op));
}

Status HostBackedDevice::waitFlag(DeviceStream* s, const uint64_t* flag, uint64_t value) {
  MYR_TRY(checkProcess("waitFlag"));
  MYR_TRY(checkFlag("waitFlag", flag, /*ownOnly=*/true));
  Op op;
  op.kind = Op::Kind::kWaitFlag;
  op.flag = const_cast<uint64_t*>(flag);
  op.value = value;
  return enqueue(s, std::move(op));
}

Status HostBackedDevice::writeFlag(DeviceStream* s, uint64_t* flag, uint64_t value) {
  MYR_TRY(checkProcess("writeFlag"));
  MYR_TRY(checkFlag("writeFlag", flag, /*ownOnly=*/false));
  Op op;
  op.kind = Op::Kind::kWriteFlag;
  op.flag = flag;
  op.value = value;
  return enqueue(s, std::move(op));
}

Status HostBackedDevice::copy(DeviceStream* s, void* dst, const void* src, size_t bytes) {
  MYR_TRY(checkProcess("copy"));
  if (bytes == 0) return Status::ok();
  // Either side may be host memory, as with cudaMemcpyAsync under unified addressing.
  auto d = reinterpret_cast<uintptr_t>(dst), a = reinterpret_cast<uintptr_t>(src);
  // memcpy on overlapping ranges is undefined on a GPU too; a lowering that does it is wrong (dst == src is a
  // harmless no-op and allowed).
  if (d != a && d < a + bytes && a < d + bytes)
    return invalidArgument("host-backed device: copy of " + std::to_string(bytes) + " bytes from " + addressText(src) +
                           " to " + addressText(dst) + ": the ranges overlap");
  Op op;
  op.kind = Op::Kind::kCopy;
  op.dst = dst;
  op.a = src;
  op.count = bytes;
  return enqueue(s, std::move(op));
}

Status HostBackedDevice::reduce(DeviceStream* s, void* dst, const void* a, const void* b, size_t count,
                                myrDataType_t dtype, myrRedOp_t op) {
  MYR_TRY(checkProcess("reduce"));
  if (!validDtype(dtype) || !validOp(op))
    return invalidArgument("host-backed device: reduce with dtype " + std::to_string(dtype) + ", op " +
                           std::to_string(op));
  if (count == 0) return Status::ok();
  size_t bytes = count * dtypeSize(dtype);
  MYR_TRY(checkRange("reduce destination", dst, bytes));
  MYR_TRY(checkRange("reduce input a", a, bytes));
  MYR_TRY(checkRange("reduce input b", b, bytes));
  Op o;
  o.kind = Op::Kind::kReduce;
  o.dst = dst;
  o.a = a;
  o.b = b;
  o.count = count;
  o.dtype = dtype;
  o.redOp = op;
  return enqueue(s, std::move(o));
}

Status HostBackedDevice::scaleAvg(DeviceStream* s, void* buf, size_t count, myrDataType_t dtype, int n) {
  MYR_TRY(checkProcess("scaleAvg"));
  if (!validDtype(dtype) || n < 1)
    return invalidArgument("host-backed device: scaleAvg with dtype " + std::to_string(dtype) + ", n " +
                           std::to_string(n));
  if (count == 0) return Status::ok();
  MYR_TRY(checkRange("scaleAvg buffer", buf, count * dtypeSize(dtype)));
  Op op;
  op.kind = Op::Kind::kScaleAvg;
  op.dst = buf;
  op.count = count;
  op.dtype = dtype;
  op.n = n;
  return enqueue(s, std::move(op));
}

Status HostBackedDevice::releaseFlag(uint64_t* flag, uint64_t value) {
  MYR_TRY(checkProcess("releaseFlag"));
  MYR_TRY(checkFlag("releaseFlag", flag, /*ownOnly=*/true));
  std::atomic_ref<uint64_t>(*flag).store(value, std::memory_order_release);
  std::lock_guard<std::mutex> lk(mu_);
  lastProgress_ = Clock::now();  // the host changed what may run: the stall clock starts again
  stalled_ = false;
  kicked_ = true;
  workCv_.notify_one();
  return Status::ok();
}

// ---- the worker ----

bool HostBackedDevice::ready(const Op& op) const {
  switch (op.kind) {
    case Op::Kind::kWaitFlag: return loadAcquire(op.flag) >= op.value;
    case Op::Kind::kWaitEvent: return op.event->done(op.record);
    default: return true;
  }
}

bool HostBackedDevice::anyReady() const {
  return std::any_of(streams_.begin(), streams_.end(),
                     [this](const auto& q) { return !q->ops.empty() && ready(q->ops.front()); });
}

void HostBackedDevice::execute(const Op& op) {
  if (options_.maxOpDelayUs > 0) {
    auto us = std::uniform_int_distribution<int>(0, options_.maxOpDelayUs)(rng_);
    std::this_thread::sleep_for(std::chrono::microseconds(us));
  }
  switch (op.kind) {
    case Op::Kind::kWriteFlag: std::atomic_ref<uint64_t>(*op.flag).store(op.value, std::memory_order_release); break;
    case Op::Kind::kCopy:
      if (op.dst != op.a) std::memcpy(op.dst, op.a, op.count);
      break;
    case Op::Kind::kReduce: deviceReduceOnHost(op.dst, op.a, op.b, op.count, op.dtype, op.redOp); break;
    case Op::Kind::kScaleAvg: deviceScaleAvgOnHost(op.dst, op.count, op.dtype, op.n); break;
    default: break;
  }
}

// One visit of every stream: its head runs if it can. Returns whether anything ran.
bool HostBackedDevice::runPass(std::unique_lock<std::mutex>& lk) {
  kicked_ = false;  // whatever was enqueued so far is seen by this pass
  std::erase_if(streams_, [](const auto& q) { return q->destroyed && q->ops.empty() && !q->running; });
  std::vector<Queue*> order;
  order.reserve(streams_.size());
  for (const auto& q : streams_) order.push_back(q.get());
  if (options_.orderSeed != 0) std::shuffle(order.begin(), order.end(), rng_);
  bool ran = false;
  for (Queue* q : order) {
    if (q->ops.empty() || !ready(q->ops.front())) continue;
    Op& head = q->ops.front();
    if (head.kind == Op::Kind::kRecord) {
      head.event->markDone(head.record);
    } else if (head.kind != Op::Kind::kWaitFlag && head.kind != Op::Kind::kWaitEvent) {
      Op op = head;
      q->running = true;
      lk.unlock();
      execute(op);
      lk.lock();
      q->running = false;
      if (stop_) return true;  // the destructor discards what is left
    }
    q->ops.pop_front();
    ran = true;
    lastProgress_ = Clock::now();
    stalled_ = false;
    if (q->ops.empty()) doneCv_.notify_all();
  }
  return ran;
}

void HostBackedDevice::workerLoop() {
  std::unique_lock<std::mutex> lk(mu_);
  int idlePasses = 0;
  while (!stop_) {
    if (runPass(lk)) {
      idlePasses = 0;
      continue;
    }
    bool anyWork = std::any_of(streams_.begin(), streams_.end(), [](const auto& q) { return !q->ops.empty(); });
    if (!anyWork) {
      workCv_.wait(lk, [&] { return stop_ || kicked_; });
      continue;
    }
    noteStall();
    if (++idlePasses < kSpinPasses) {
      lk.unlock();
      std::this_thread::yield();
      lk.lock();
      continue;
    }
    // Flags written by other processes wake nobody: poll them in short steps.
    auto step = Clock::now() - lastProgress_ < kLongSleepAfter ? kShortSleep : kLongSleep;
    workCv_.wait_for(lk, step, [&] { return stop_ || kicked_; });
  }
}

std::string HostBackedDevice::describeWait(const Queue& q) const {
  const Op& head = q.ops.front();
  std::string s = "'" + q.name + "' (" + std::to_string(q.ops.size()) + " ops queued) waits for ";
  if (head.kind == Op::Kind::kWaitFlag)
    return s + "flag " + addressText(head.flag) + " >= " + std::to_string(head.value) + ", which holds " +
           std::to_string(loadAcquire(head.flag));
  const Event& e = *head.event;
  std::string runs = "records below #" + std::to_string(e.doneBelow) + " ran";
  for (uint64_t k : e.doneAbove) runs += ", #" + std::to_string(k);
  return s + "event " + std::to_string(e.id) + " record #" + std::to_string(head.record) + " of " +
         std::to_string(e.enqueued) + " enqueued (" + runs + ")";
}

void HostBackedDevice::noteStall() {
  auto idle = Clock::now() - lastProgress_;
  if (stalled_ || idle < stallTime_) return;
  std::string r = "deadlock on the host-backed device of process " + std::to_string(pid_) + ": nothing ran for " +
                  std::to_string(std::chrono::duration_cast<std::chrono::milliseconds>(idle).count()) +
                  " ms and every stream with work waits:";
  for (const auto& q : streams_)
    if (!q->ops.empty()) r += "\n  " + describeWait(*q);
  stalled_ = true;
  stallReport_ = r;
  doneCv_.notify_all();
  MYR_LOG(kWarn, kColl, -1, r);
}

}  // namespace myriad
