// ErrorState: a communicator's first asynchronous error and its abort flag. Every wait loop checks
// aborted(); the first failure wins and later ones are dropped, so every call reports the root cause.
#pragma once

#include <atomic>
#include <mutex>

#include "base/status.h"

namespace myriad {

class ErrorState {
 public:
  // Records `s` if it is the first error and raises the abort flag. Returns the recorded first error.
  Status fail(const Status& s) {
    std::lock_guard<std::mutex> lock(mu_);
    if (first_.isOk()) first_ = s;
    abort_.store(true, std::memory_order_release);
    return first_;
  }
  // Raises the abort flag without an error of our own (myrCommAbort).
  void abort() { abort_.store(true, std::memory_order_release); }
  bool aborted() const { return abort_.load(std::memory_order_acquire); }
  const std::atomic<bool>* flag() const { return &abort_; }
  Status first() const {
    std::lock_guard<std::mutex> lock(mu_);
    return first_;
  }

 private:
  std::atomic<bool> abort_{false};
  mutable std::mutex mu_;
  Status first_;
};

}  // namespace myriad
