// ErrorState: a communicator's first asynchronous error and its abort flag. Every wait loop checks
// aborted(); the first failure wins and later ones are dropped, so every call reports the root cause.
#pragma once

#include <atomic>
#include <functional>
#include <mutex>

#include "base/status.h"

namespace myriad {

class ErrorState {
 public:
  // Records `s` if it is the first error and raises the abort flag. Returns the recorded first error.
  Status fail(const Status& s) {
    Status first;
    bool isFirst = false;
    {
      std::lock_guard<std::mutex> lock(mu_);
      isFirst = first_.isOk() && !s.isOk();
      if (isFirst) first_ = s;
      abort_.store(true, std::memory_order_release);
      first = first_;
    }
    if (isFirst && onFirst_) onFirst_();  // outside the lock: it may read first()
    return first;
  }
  // Called once, by the thread that records the first error (MYRIAD_DUMP_ON_ERROR). Set before the
  // communicator is used.
  void onFirstError(std::function<void()> f) { onFirst_ = std::move(f); }
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
  std::function<void()> onFirst_;
};

}  // namespace myriad
