// ShmBell: a rank's doorbell in shared memory, so that a rank with nothing to do sleeps in the kernel
// (futex) instead of spinning, and wakes the moment a peer publishes data or frees FIFO space for it.
// Ranks often outnumber cores; a spinning rank would steal the core its peer needs. Protocol: the waiter
// reads seq, re-checks its work, announces itself in `sleepers`, and sleeps while seq is unchanged; a
// ringer bumps seq and calls the kernel only when someone sleeps. Both sides use sequentially consistent
// operations, so either the ringer sees the sleeper or the sleeper sees the new seq.
#pragma once

#include <atomic>
#include <cstdint>
#include <string>

#include "base/status.h"

namespace myriad {

struct BellWord {
  std::atomic<uint32_t> seq;
  std::atomic<uint32_t> sleepers;
};

class ShmBell {
 public:
  ShmBell() = default;
  ShmBell(const ShmBell&) = delete;
  ShmBell& operator=(const ShmBell&) = delete;
  ~ShmBell();

  // Maps the bell named `name`, creating it if this is the first rank to need it. `owner`: unlink on
  // destruction (the rank the bell belongs to).
  Status open(const std::string& name, bool owner);
  uint32_t seq() const { return word_->seq.load(std::memory_order_seq_cst); }
  void ring();
  // Sleeps until seq differs from `seen` or `timeoutUs` passes.
  void wait(uint32_t seen, int timeoutUs);
  // Whether the bell's name is still there: its owner unlinks it when its transport goes.
  bool nameExists() const;

 private:
  BellWord* word_ = nullptr;
  std::string name_;
  bool owner_ = false;
};

}  // namespace myriad
