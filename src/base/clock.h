// Time and byte-buffer vocabulary shared by every part: one monotonic clock, deadlines as time points.
#pragma once

#include <chrono>
#include <cstdint>
#include <vector>

namespace myriad {

using Clock = std::chrono::steady_clock;
using Bytes = std::vector<uint8_t>;

inline Clock::time_point deadlineIn(int ms) {
  return Clock::now() + std::chrono::milliseconds(ms);
}
inline int64_t msSince(Clock::time_point t) {
  return std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - t).count();
}

}  // namespace myriad
