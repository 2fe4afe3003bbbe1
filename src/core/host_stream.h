// HostStream: an ordered, asynchronous queue of calls on host memory, run by one worker thread. The first
// error of any call is kept and returned once by synchronize(); later calls still run (each communicator
// fails its own calls fast once it has an error).
#pragma once

#include <condition_variable>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>

#include "base/status.h"

namespace myriad {

class HostStream {
 public:
  HostStream();
  ~HostStream();  // drains the queue, then joins
  HostStream(const HostStream&) = delete;
  HostStream& operator=(const HostStream&) = delete;

  void enqueue(std::function<Status()> work);
  Status synchronize();

 private:
  void loop();
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<std::function<Status()>> queue_;
  bool running_ = false;  // the worker is executing an item
  bool stop_ = false;
  Status firstError_;
  std::thread worker_;
};

}  // namespace myriad
