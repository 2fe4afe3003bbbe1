// WorkMyriad: completion, failure and bounded waits of one queued operation.
#include "work.h"

#include <c10/util/Exception.h>

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

bool WorkMyriad::wait(std::chrono::milliseconds timeout) {
  const auto limit = timeout == kNoTimeout ? timeout_ : timeout;
  std::unique_lock<std::mutex> lock(mutex_);
  if (!cv_.wait_for(lock, limit, [this] { return completed_; })) {
    C10_THROW_ERROR(DistBackendError, "myriad: " + name_ + " on rank " + std::to_string(rank_) +
                                          " did not complete within " + std::to_string(limit.count()) + " ms");
  }
  if (exception_) std::rethrow_exception(exception_);
  return true;
}

int WorkMyriad::sourceRank() const {
  TORCH_CHECK(sourceRank_ >= 0, "myriad: sourceRank() is defined for recv only");
  return sourceRank_;
}

}  // namespace torch_myriad
