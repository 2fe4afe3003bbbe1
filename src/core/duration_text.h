// Durations in the liveness channel's and the stall judge's messages: "2.1 s".
#pragma once

#include <cstdint>
#include <cstdio>
#include <string>

namespace myriad {

inline std::string secondsText(int64_t ms) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%.1f s", static_cast<double>(ms) / 1000.0);
  return buf;
}

}  // namespace myriad
