// BytePool: byte buffers kept for reuse by one connection's staged sends and early chunks, so that a steady
// stream of messages does not allocate each one afresh (glibc maps blocks of 128 KiB and more anew on every
// malloc, and each page then faults on first touch). Bounded in count and in bytes kept.
#pragma once

#include <utility>
#include <vector>

#include "base/clock.h"

namespace myriad::mp {

class BytePool {
 public:
  // A buffer with whatever capacity it had (possibly none); resize or assign it.
  Bytes take() {
    if (free_.empty()) return {};
    Bytes b = std::move(free_.back());
    free_.pop_back();
    kept_ -= b.capacity();
    return b;
  }
  void give(Bytes&& b) {
    if (b.capacity() == 0 || free_.size() >= kMaxBuffers || kept_ + b.capacity() > kMaxBytes) return;
    kept_ += b.capacity();
    free_.push_back(std::move(b));
  }

 private:
  static constexpr size_t kMaxBuffers = 4;
  static constexpr size_t kMaxBytes = size_t{2} << 20;
  std::vector<Bytes> free_;
  size_t kept_ = 0;
};

}  // namespace myriad::mp
