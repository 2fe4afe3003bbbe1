// Logging: MYRIAD_DEBUG level and MYRIAD_DEBUG_SUBSYS filter, each line "host:pid:rank [SUBSYS] text".
// The logger is process-wide (one file, one filter) and configured by the first Config that reaches it.
#pragma once

#include <string>

#include "base/config.h"

namespace myriad {

enum class LogLevel { kNone = 0, kWarn = 1, kInfo = 2, kTrace = 3 };
enum class Subsys : unsigned { kInit = 1, kBoot = 2, kNet = 4, kShm = 8, kColl = 16, kTune = 32 };

void configureLogging(const Config& config);
bool logEnabled(LogLevel level, Subsys subsys);
// rank < 0 prints "-" for ranks not yet known.
void logLine(LogLevel level, Subsys subsys, int rank, const std::string& text);

}  // namespace myriad

#define MYR_LOG(level, subsys, rank, text)                                                    \
  do {                                                                                        \
    if (::myriad::logEnabled(::myriad::LogLevel::level, ::myriad::Subsys::subsys))            \
      ::myriad::logLine(::myriad::LogLevel::level, ::myriad::Subsys::subsys, (rank), (text)); \
  } while (0)
