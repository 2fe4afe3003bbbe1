// HostStream worker.
#include "core/host_stream.h"

namespace myriad {

HostStream::HostStream() : worker_([this] { loop(); }) {}

HostStream::~HostStream() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  worker_.join();
}

void HostStream::enqueue(std::function<Status()> work) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    queue_.push_back(std::move(work));
  }
  cv_.notify_all();
}

Status HostStream::synchronize() {
  std::unique_lock<std::mutex> lock(mu_);
  cv_.wait(lock, [this] { return queue_.empty() && !running_; });
  Status s = std::move(firstError_);
  firstError_ = Status();
  return s;
}

void HostStream::loop() {
  std::unique_lock<std::mutex> lock(mu_);
  while (true) {
    cv_.wait(lock, [this] { return stop_ || !queue_.empty(); });
    if (queue_.empty()) return;  // stop_ and drained
    auto work = std::move(queue_.front());
    queue_.pop_front();
    running_ = true;
    lock.unlock();
    Status s = work();
    lock.lock();
    running_ = false;
    if (!s.isOk() && firstError_.isOk()) firstError_ = std::move(s);
    cv_.notify_all();
  }
}

}  // namespace myriad
