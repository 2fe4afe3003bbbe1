// Window<T>: per-index state for a sequence that is worked through roughly in order (a rank's steps, a
// connection's messages): entries from base() on live in a ring buffer that grows to the widest span ever
// used, entries before base() are gone. The simulator keeps per-step state this way so that its memory
// follows the steps in flight, not every step of the plan.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace myriad::netsim {

template <typename T>
class Window {
 public:
  explicit Window(T fill = T{}) : fill_(fill) {}

  uint64_t base() const { return base_; }
  size_t span() const { return size_; }
  // Entry i (i >= base()), created with the fill value, as are any between, if i is past the end.
  T& at(uint64_t i) {
    const uint64_t d = i - base_;
    if (d >= size_) {
      if (d >= buf_.size()) grow(d + 1);
      size_ = static_cast<size_t>(d) + 1;
    }
    return buf_[(head_ + static_cast<size_t>(d)) & (buf_.size() - 1)];
  }
  // The entry i if it exists (i within [base(), base() + span())), else null.
  const T* find(uint64_t i) const {
    if (i < base_ || i - base_ >= size_) return nullptr;
    return &buf_[(head_ + static_cast<size_t>(i - base_)) & (buf_.size() - 1)];
  }
  bool empty() const { return size_ == 0; }
  // Entries held (the widest span so far, rounded up to a power of two).
  size_t capacity() const { return buf_.size(); }
  T& front() { return buf_[head_]; }
  // Drops entry base(): base() moves on by one.
  void popFront() {
    buf_[head_] = fill_;
    head_ = (head_ + 1) & (buf_.size() - 1);
    --size_, ++base_;
  }

 private:
  void grow(uint64_t need) {
    size_t cap = buf_.empty() ? 4 : buf_.size();
    while (cap < need) cap *= 2;
    std::vector<T> next(cap, fill_);
    for (size_t k = 0; k < size_; ++k) next[k] = buf_[(head_ + k) & (buf_.size() - 1)];
    buf_ = std::move(next);
    head_ = 0;
  }

  std::vector<T> buf_;  // a power of two long; unused entries hold fill_
  size_t head_ = 0, size_ = 0;
  uint64_t base_ = 0;
  T fill_;
};

}  // namespace myriad::netsim
