// BackendMyriad's life: bootstrap through the c10d Store, the progress thread, coalescing, split, shrink,
// abort and shutdown. The collectives themselves are in collectives.cc.
#include "backend.h"

#include <c10/core/DeviceGuard.h>
#include <c10/core/StreamGuard.h>
#include <c10/util/Exception.h>

#include <algorithm>
#include <climits>
#include <cstring>

namespace torch_myriad {
namespace {

constexpr const char* kUniqueIdKey = "myriad_unique_id";

int clampMs(std::chrono::milliseconds t) {
  if (t.count() <= 0) return MYR_CONFIG_UNDEF_INT;  // Myriad's default
  return static_cast<int>(std::min<int64_t>(t.count(), INT_MAX));
}

}  // namespace

c10::intrusive_ptr<BackendMyriad> BackendMyriad::create(const c10::intrusive_ptr<c10d::Store>& store, int rank,
                                                        int size, std::chrono::milliseconds timeout) {
  myrUniqueId id;
  if (rank == 0) {
    const myrResult_t r = myrGetUniqueId(&id);
    if (r != myrSuccess) {
      C10_THROW_ERROR(DistBackendError, std::string("myriad: myrGetUniqueId on rank 0 failed: ") +
                                            myrGetLastError(nullptr) + " (" + myrGetErrorString(r) + ")");
    }
    store->set(kUniqueIdKey, std::vector<uint8_t>(id.internal, id.internal + sizeof(id.internal)));
  } else {
    const std::vector<uint8_t> bytes = store->get(kUniqueIdKey);
    TORCH_CHECK(bytes.size() == sizeof(id.internal), "myriad: the store's unique id has ", bytes.size(),
                " bytes, expected ", sizeof(id.internal));
    std::memcpy(id.internal, bytes.data(), bytes.size());
  }
  myrConfig_t config = MYR_CONFIG_INITIALIZER;
  config.timeoutMs = clampMs(timeout);
  config.initTimeoutMs = clampMs(timeout);
  myrComm_t comm = nullptr;
  const myrResult_t r = myrCommInitRankConfig(&comm, size, id, rank, &config);
  if (r != myrSuccess) {
    C10_THROW_ERROR(DistBackendError, "myriad: joining the communicator as rank " + std::to_string(rank) + " of " +
                                          std::to_string(size) + " failed: " + myrGetLastError(comm) + " (" +
                                          myrGetErrorString(r) + ")");
  }
  return c10::make_intrusive<BackendMyriad>(comm, rank, size, timeout, store);
}

BackendMyriad::BackendMyriad(myrComm_t comm, int rank, int size, std::chrono::milliseconds timeout,
                             c10::intrusive_ptr<c10d::Store> store)
    : c10d::Backend(rank, size), comm_(comm), timeout_(timeout), store_(std::move(store)), received_(size, 0) {
  const myrResult_t r = myrStreamCreate(&stream_);
  if (r != myrSuccess) {
    myrCommDestroy(comm_);
    C10_THROW_ERROR(DistBackendError, std::string("myriad: myrStreamCreate failed: ") + myrGetErrorString(r));
  }
  thread_ = std::thread([this] { loop(); });
  init();
}

BackendMyriad::~BackendMyriad() {
  shutdown();
}

c10::intrusive_ptr<c10d::Backend::Options> BackendMyriad::getBackendOptions() {
  return c10::make_intrusive<Options>("myriad", timeout_);
}

void BackendMyriad::setTimeout(std::chrono::milliseconds timeout) {
  // Bounds the waits of later works; the communicator's own silence timeout was fixed at init.
  timeout_ = timeout;
}

void BackendMyriad::startCoalescing() {
  TORCH_CHECK(!coalesced_, "myriad: startCoalescing while already coalescing");
  coalesced_ = c10::make_intrusive<WorkMyriad>(c10d::OpType::COALESCED, "coalesced", rank_, timeout_);
}

c10::intrusive_ptr<c10d::Work> BackendMyriad::endCoalescing() {
  TORCH_CHECK(coalesced_, "myriad: endCoalescing without startCoalescing");
  auto work = std::move(coalesced_);
  coalesced_.reset();
  return submit(work);
}

c10::intrusive_ptr<WorkMyriad> BackendMyriad::begin(c10d::OpType type, const char* name) {
  if (coalesced_) return coalesced_;
  return c10::make_intrusive<WorkMyriad>(type, name, rank_, timeout_);
}

c10::intrusive_ptr<c10d::Work> BackendMyriad::submit(const c10::intrusive_ptr<WorkMyriad>& work) {
  // Ordered after what the caller's stream holds now (its inputs, the staging copies just queued there).
  if (work->onCuda()) streams_.waitForCaller(*work->device());
  if (work == coalesced_) return work;  // issued as a whole by endCoalescing
  {
    std::lock_guard<std::mutex> lock(queueMu_);
    TORCH_CHECK(!stop_, "myriad: ", work->name(), " on rank ", rank_, " after the backend was shut down");
    work->setTicket(nextTicket_++);
    if (!work->onCuda()) queue_.push_back(work);
  }
  if (work->onCuda()) {
    enqueue(*work);
    return work;
  }
  queueCv_.notify_one();
  return work;
}

void BackendMyriad::awaitTurn(uint64_t ticket) {
  std::unique_lock<std::mutex> lock(turnMu_);
  turnCv_.wait(lock, [&] { return turn_ == ticket; });
}

void BackendMyriad::passTurn() {
  {
    std::lock_guard<std::mutex> lock(turnMu_);
    ++turn_;
  }
  turnCv_.notify_all();
}

void BackendMyriad::loop() {
  while (true) {
    c10::intrusive_ptr<WorkMyriad> work;
    {
      std::unique_lock<std::mutex> lock(queueMu_);
      queueCv_.wait(lock, [this] { return stop_ || !queue_.empty(); });
      if (queue_.empty()) return;  // stopped and drained
      work = std::move(queue_.front());
      queue_.pop_front();
    }
    run(*work);
  }
}

std::string BackendMyriad::failure(const WorkMyriad& work, myrResult_t r) {
  std::string what = aborted_ ? std::string("the communicator was aborted")
                     : comm_  ? std::string(myrGetLastError(comm_))
                              : std::string("the communicator was shut down");
  if (what.empty()) what = myrGetErrorString(r);
  return "myriad: " + work.name() + " failed on rank " + std::to_string(rank_) + ": " + what + " (" +
         myrGetErrorString(r) + ")";
}

myrResult_t BackendMyriad::issue(WorkMyriad& work, myrStream_t stream) {
  // A coalesced batch is one Myriad group, so any mix of sends and receives completes.
  const bool group = work.steps().size() > 1 || work.name() == "coalesced";
  if (group) myrGroupStart();
  myrResult_t r = myrSuccess;
  for (auto& step : work.steps()) {
    r = step.issue(comm_, stream);
    if (r != myrSuccess) break;
  }
  if (group) {
    const myrResult_t e = myrGroupEnd();
    if (r == myrSuccess) r = e;
  }
  return r;
}

std::string BackendMyriad::prepare(WorkMyriad& work) {
  try {
    for (auto& step : work.steps())
      if (step.prepare) step.prepare();
  } catch (const std::exception& e) {
    return "myriad: " + work.name() + " failed on rank " + std::to_string(rank_) + ": " + e.what();
  }
  return "";
}

void BackendMyriad::run(WorkMyriad& work) {
  myrResult_t r = myrSuccess;
  awaitTurn(work.ticket());
  const std::string prepared = prepare(work);
  if (!prepared.empty()) {
    passTurn();
    work.fail(prepared);
    return;
  }
  {
    std::lock_guard<std::mutex> lock(commMu_);
    r = comm_ ? issue(work, stream_) : myrInvalidUsage;
  }
  passTurn();  // issued (or failed): later works may issue while this one runs
  const myrResult_t s = myrStreamSynchronize(stream_);
  if (r == myrSuccess) r = s;
  if (r != myrSuccess) {
    std::string message;
    {
      std::lock_guard<std::mutex> lock(commMu_);
      message = failure(work, r);
    }
    work.fail(message);
    return;
  }
  work.complete();
}

void BackendMyriad::enqueue(WorkMyriad& work) {
  // Earlier works (host works the progress thread has not issued yet) go first; passing the turn on every
  // path, exceptions included, lets later ones go.
  awaitTurn(work.ticket());
  struct Pass {
    BackendMyriad* self;
    ~Pass() { self->passTurn(); }
  } pass{this};
  std::string message = prepare(work);
  if (!message.empty()) {
    work.fail(message);
    C10_THROW_ERROR(DistBackendError, message);
  }
  {
    std::lock_guard<std::mutex> lock(commMu_);
    if (comm_) {
      const c10::Device device = *work.device();
      const c10::DeviceGuard deviceGuard(device);
      const c10::Stream stream = streams_.internal(device);
      const c10::StreamGuard streamGuard(stream);  // finish()'s copies and the Future's events go on it
      const myrResult_t r = issue(work, asMyriadStream(stream));
      if (r == myrSuccess) {
        auto self = c10::weak_intrusive_ptr<BackendMyriad>(
            c10::intrusive_ptr<BackendMyriad>::unsafe_reclaim_from_nonowning(this));
        work.enqueued(stream, [self] {
          auto backend = self.lock();
          return backend ? backend->asyncError() : std::string();
        });
        return;
      }
      message = failure(work, r);
    } else {
      message = failure(work, myrInvalidUsage);
    }
  }
  work.fail(message);
  C10_THROW_ERROR(DistBackendError, message);
}

std::string BackendMyriad::asyncError() {
  std::lock_guard<std::mutex> lock(commMu_);
  if (aborted_) return "myriad: rank " + std::to_string(rank_) + ": the communicator was aborted";
  if (!comm_) return "";
  myrResult_t e = myrSuccess;
  if (myrCommGetAsyncError(comm_, &e) != myrSuccess || e == myrSuccess || e == myrInProgress) return "";
  std::string what = myrGetLastError(comm_);
  if (what.empty()) what = myrGetErrorString(e);
  return "myriad: rank " + std::to_string(rank_) + ": " + what + " (" + myrGetErrorString(e) + ")";
}

c10::intrusive_ptr<c10d::Backend> BackendMyriad::split(const c10::intrusive_ptr<c10d::Store>& store,
                                                       const std::vector<int>& ranks,
                                                       const c10::intrusive_ptr<Options>& opts) {
  // Collective over this group: members of `ranks` get a new communicator, the others pass no colour.
  int color = MYR_SPLIT_NOCOLOR;
  if (std::find(ranks.begin(), ranks.end(), rank_) != ranks.end()) {
    color = *std::min_element(ranks.begin(), ranks.end());
  }
  auto newComm = std::make_shared<myrComm_t>(nullptr);
  auto work = c10::make_intrusive<WorkMyriad>(c10d::OpType::UNKNOWN, "split", rank_, timeout_);
  const int key = rank_;
  work->add(Step{[newComm, color, key](myrComm_t comm, myrStream_t) {
                   return myrCommSplit(comm, color, key, newComm.get(), nullptr);
                 },
                 nullptr},
            {});
  submit(work)->wait();
  if (*newComm == nullptr) return nullptr;
  int newRank = 0;
  int newSize = 0;
  myrCommUserRank(*newComm, &newRank);
  myrCommCount(*newComm, &newSize);
  return c10::make_intrusive<BackendMyriad>(*newComm, newRank, newSize, opts ? opts->timeout : timeout_, store);
}

c10::intrusive_ptr<c10d::Backend> BackendMyriad::shrink(const std::vector<int64_t>& ranksToExclude, int shrinkFlags,
                                                        const c10::intrusive_ptr<Options>& optsOverride) {
  TORCH_CHECK(!coalesced_, "myriad: shrink while coalescing");
  std::vector<int> excluded;
  for (int64_t r : ranksToExclude) {
    TORCH_CHECK(r >= 0 && r < size_, "myriad: shrink: rank ", r, " is not in this group of ", size_);
    excluded.push_back(static_cast<int>(r));
  }
  const std::chrono::milliseconds timeout = optsOverride ? optsOverride->timeout : timeout_;
  myrConfig_t config = MYR_CONFIG_INITIALIZER;
  config.timeoutMs = clampMs(timeout);
  config.initTimeoutMs = clampMs(timeout);
  const bool useConfig = static_cast<bool>(optsOverride);  // else the new communicator inherits the settings
  auto newComm = std::make_shared<myrComm_t>(nullptr);
  auto call = [newComm, excluded, config, useConfig, shrinkFlags](myrComm_t comm, myrStream_t) mutable {
    return myrCommShrink(comm, excluded.data(), static_cast<int>(excluded.size()), newComm.get(),
                         useConfig ? &config : nullptr, shrinkFlags);
  };
  if (shrinkFlags & MYR_SHRINK_ABORT) {
    // Not queued: the works in flight may wait on a dead rank. The abort inside fails them at once, and the
    // progress thread reports them.
    std::string message;
    {
      std::lock_guard<std::mutex> lock(commMu_);
      const myrResult_t r = comm_ ? call(comm_, nullptr) : myrInvalidUsage;
      if (r != myrSuccess)
        message = std::string(comm_ ? myrGetLastError(comm_) : "the communicator was shut down") + " (" +
                  myrGetErrorString(r) + ")";
    }
    if (!message.empty())
      C10_THROW_ERROR(DistBackendError, "myriad: shrink failed on rank " + std::to_string(rank_) + ": " + message);
  } else {
    auto work = c10::make_intrusive<WorkMyriad>(c10d::OpType::UNKNOWN, "shrink", rank_, timeout_);
    work->add(Step{call, nullptr}, {});
    submit(work)->wait();
  }
  int newRank = 0;
  int newSize = 0;
  myrCommUserRank(*newComm, &newRank);
  myrCommCount(*newComm, &newSize);
  return c10::make_intrusive<BackendMyriad>(*newComm, newRank, newSize, timeout);
}

void BackendMyriad::stopThread() {
  {
    std::lock_guard<std::mutex> lock(queueMu_);
    stop_ = true;
  }
  queueCv_.notify_all();
  if (thread_.joinable() && thread_.get_id() != std::this_thread::get_id()) thread_.join();
}

void BackendMyriad::abort() {
  {
    std::lock_guard<std::mutex> lock(commMu_);
    if (comm_) {
      aborted_ = true;
      myrCommAbort(comm_);  // outstanding calls fail; the progress thread reports them as aborted
      comm_ = nullptr;
    }
  }
  stopThread();
}

void BackendMyriad::shutdown() {
  stopThread();  // runs what is queued first
  {
    std::lock_guard<std::mutex> lock(commMu_);
    if (comm_) {
      myrResult_t asyncError = myrSuccess;
      myrCommGetAsyncError(comm_, &asyncError);
      // What CUDA works enqueued runs to its end first, unless a failure shows up meanwhile (a dead peer's
      // wait is released only by the abort below).
      while (asyncError == myrSuccess && !streams_.idle()) {
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
        myrCommGetAsyncError(comm_, &asyncError);
      }
      // A communicator whose peers failed is aborted: destroy would wait on them.
      if (asyncError == myrSuccess) {
        myrCommDestroy(comm_);
      } else {
        myrCommAbort(comm_);
      }
      comm_ = nullptr;
    }
  }
  if (stream_) {
    myrStreamDestroy(stream_);
    stream_ = nullptr;
  }
}

}  // namespace torch_myriad
