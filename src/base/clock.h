// Time and byte-buffer vocabulary shared by every part: one monotonic clock, deadlines as time points.
#pragma once

#include <algorithm>
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

// How long one poll of a wait may sleep (ms): until `deadline`, and at most 50 ms where an abort flag must be
// seen. Slices of 10 ms cost thousands of waiting threads on a few cores (ranks as threads, an oversubscribed
// node) their CPU in wake-ups: 4,096 of them woke 409,600 times a second and starved their own hellos.
inline int pollSliceMs(Clock::time_point deadline, bool abortable) {
  const int64_t left = std::chrono::ceil<std::chrono::milliseconds>(deadline - Clock::now()).count();
  return static_cast<int>(std::clamp<int64_t>(left, 0, abortable ? 50 : 1 << 30));
}

}  // namespace myriad
