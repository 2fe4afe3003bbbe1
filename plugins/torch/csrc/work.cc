// WorkMyriad: completion, failure and bounded waits of one operation, on the host or on a CUDA stream.
#include "work.h"

#include <c10/core/impl/VirtualGuardImpl.h>
#include <c10/util/Exception.h>

#include <thread>

#include "device_streams.h"

namespace torch_myriad {

std::exception_ptr backendError(const std::string& message) {
  try {
    C10_THROW_ERROR(DistBackendError, message);
  } catch (...) {
    return std::current_exception();
  }
}

WorkMyriad::WorkMyriad(c10d::OpType type, std::string name, int rank, std::chrono::milliseconds timeout)
    : c10d::Work(rank, type),
      name_(std::move(name)),
      rank_(rank),
      timeout_(timeout),
      future_(c10::make_intrusive<c10::ivalue::Future>(c10::ListType::create(c10::TensorType::get()))) {}

void WorkMyriad::add(Step step, std::vector<at::Tensor> outputs) {
  for (const auto* list : {&step.tensors, &outputs}) {
    for (const at::Tensor& t : *list) {
      if (!t.defined()) continue;
      if (!device_) device_ = t.device();
      TORCH_CHECK(t.device() == *device_, "myriad: ", name_, ": tensors on ", device_->str(), " and ", t.device().str(),
                  " in one call (a call, or a coalesced batch, takes the tensors of one device)");
    }
  }
  steps_.push_back(std::move(step));
  for (auto& t : outputs) outputs_.push_back(std::move(t));
}

void WorkMyriad::complete() {
  std::exception_ptr error;
  try {
    for (auto& s : steps_) {
      if (s.finish) s.finish();
    }
  } catch (...) {
    error = std::current_exception();
  }
  steps_.clear();  // drops the staging buffers the closures hold
  finish(error);
  if (error) {
    future_->setError(error);
    return;
  }
  future_->markCompleted(c10::IValue(outputs_));
}

void WorkMyriad::fail(const std::string& message) {
  steps_.clear();
  auto error = backendError(message);
  finish(error);
  future_->setError(error);
}

void WorkMyriad::enqueued(const c10::Stream& stream, std::function<std::string()> asyncError) {
  std::vector<at::Tensor> used = outputs_;
  for (auto& s : steps_) {
    if (s.finish) s.finish();  // copies of staged results, enqueued on `stream` after the calls
    used.insert(used.end(), s.tensors.begin(), s.tensors.end());
  }
  // The caller's tensors and the staging buffers were allocated on the caller's stream and are used on
  // ours: the allocator must not reuse them before our stream has run, whenever they are freed. This
  // (ProcessGroupNCCL's default) needs no thread watching for completion, unlike holding them in the work
  // until someone waits: a work nobody waits for would then keep them, or free them too early.
  recordOnStream(used, stream);
  steps_.clear();
  asyncError_ = std::move(asyncError);
  end_.emplace(stream.device_type());
  end_->record(stream);
  // As ProcessGroupNCCL's: a future on the work's device, completed now, with our stream current, so that
  // whoever waits for it or chains on it (DDP's comm hooks) has its stream wait for ours, not the host.
  future_ = c10::make_intrusive<c10::ivalue::Future>(c10::ListType::create(c10::TensorType::get()),
                                                     std::vector<c10::Device>{stream.device()});
  future_->markCompleted(c10::IValue(outputs_));
}

void WorkMyriad::throwIfAsyncError() {
  std::exception_ptr error;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    error = exception_;
  }
  if (!error && !end_->query() && asyncError_) {
    const std::string message = asyncError_();
    if (!message.empty()) {
      error = backendError(message);
      std::lock_guard<std::mutex> lock(mutex_);
      exception_ = error;
    }
  }
  if (error) std::rethrow_exception(error);
}

bool WorkMyriad::isCompleted() {
  if (!end_) return c10d::Work::isCompleted();
  try {
    throwIfAsyncError();
  } catch (...) {
    return true;  // failed; exception() says why
  }
  return end_->query();
}

void WorkMyriad::synchronize() {
  if (!end_) return;
  throwIfAsyncError();
  const c10::impl::VirtualGuardImpl impl(device_->type());
  end_->block(impl.getStream(*device_));
}

void WorkMyriad::blockCurrentStream() {
  if (!end_) return c10d::Work::blockCurrentStream();
  synchronize();
}

void WorkMyriad::throwTimeout(std::chrono::milliseconds limit) const {
  C10_THROW_ERROR(DistBackendError, "myriad: " + name_ + " on rank " + std::to_string(rank_) +
                                        " did not complete within " + std::to_string(limit.count()) + " ms");
}

bool WorkMyriad::wait(std::chrono::milliseconds timeout) {
  if (end_) {
    synchronize();
    if (timeout == kNoTimeout) return true;
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    while (!isCompleted()) {
      if (std::chrono::steady_clock::now() >= deadline) throwTimeout(timeout);
      std::this_thread::sleep_for(std::chrono::microseconds(200));
    }
    std::lock_guard<std::mutex> lock(mutex_);
    if (exception_) std::rethrow_exception(exception_);
    return true;
  }
  const auto limit = timeout == kNoTimeout ? timeout_ : timeout;
  std::unique_lock<std::mutex> lock(mutex_);
  if (!cv_.wait_for(lock, limit, [this] { return completed_; })) throwTimeout(limit);
  if (exception_) std::rethrow_exception(exception_);
  return true;
}

int WorkMyriad::sourceRank() const {
  TORCH_CHECK(sourceRank_ >= 0, "myriad: sourceRank() is defined for recv only");
  return sourceRank_;
}

}  // namespace torch_myriad
