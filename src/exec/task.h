// Task: one collective call, planned once, advanced by progress() until done. progress() never blocks, so
// one thread can step many tasks (ranks in a test, ranks in the simulator) and the executor alone decides
// how to wait (spin, yield, sleep) and when to check deadlines and peers' liveness.
#pragma once

#include "base/status.h"

namespace myriad {

class Task {
 public:
  virtual ~Task() = default;
  virtual Status start() = 0;
  // Advances without blocking; sets *done when the result is in place.
  virtual Status progress(bool* done) = 0;
};

}  // namespace myriad
