// The process-wide logger behind MYR_LOG.
#include "base/log.h"

#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <mutex>

namespace myriad {
namespace {

std::atomic<int> gLevel{static_cast<int>(LogLevel::kWarn)};
std::atomic<unsigned> gSubsys{~0u};
std::mutex gMutex;
FILE* gFile = nullptr;
std::once_flag gOnce;

const char* subsysName(Subsys s) {
  switch (s) {
    case Subsys::kInit: return "INIT";
    case Subsys::kBoot: return "BOOT";
    case Subsys::kNet: return "NET";
    case Subsys::kShm: return "SHM";
    case Subsys::kColl: return "COLL";
    case Subsys::kTune: return "TUNE";
  }
  return "?";
}

unsigned parseSubsys(const std::string& list) {
  bool exclude = !list.empty() && list[0] == '^';
  unsigned mask = 0;
  size_t pos = exclude ? 1 : 0;
  while (pos < list.size()) {
    size_t comma = list.find(',', pos);
    if (comma == std::string::npos) comma = list.size();
    std::string name = list.substr(pos, comma - pos);
    if (name == "ALL") mask = ~0u;
    for (Subsys s : {Subsys::kInit, Subsys::kBoot, Subsys::kNet, Subsys::kShm, Subsys::kColl, Subsys::kTune})
      if (name == subsysName(s)) mask |= static_cast<unsigned>(s);
    pos = comma + 1;
  }
  return exclude ? ~mask : mask;
}

std::string expandPath(const std::string& pattern) {
  char host[256] = "";
  gethostname(host, sizeof(host) - 1);
  std::string out;
  for (size_t i = 0; i < pattern.size(); ++i) {
    if (pattern[i] == '%' && i + 1 < pattern.size() && pattern[i + 1] == 'h') {
      out += host;
      ++i;
      continue;
    }
    if (pattern[i] == '%' && i + 1 < pattern.size() && pattern[i + 1] == 'p') {
      out += std::to_string(getpid());
      ++i;
      continue;
    }
    out += pattern[i];
  }
  return out;
}

}  // namespace

void configureLogging(const Config& config) {
  std::call_once(gOnce, [&] {
    LogLevel level = LogLevel::kWarn;
    if (config.debugLevel == "NONE") level = LogLevel::kNone;
    if (config.debugLevel == "INFO") level = LogLevel::kInfo;
    if (config.debugLevel == "TRACE") level = LogLevel::kTrace;
    gLevel = static_cast<int>(level);
    gSubsys = parseSubsys(config.debugSubsys);
    if (!config.debugFile.empty()) gFile = std::fopen(expandPath(config.debugFile).c_str(), "a");
  });
}

bool logEnabled(LogLevel level, Subsys subsys) {
  return static_cast<int>(level) <= gLevel.load(std::memory_order_relaxed) &&
         (gSubsys.load(std::memory_order_relaxed) & static_cast<unsigned>(subsys));
}

void logLine(LogLevel level, Subsys subsys, int rank, const std::string& text) {
  static const std::string host = [] {
    char h[256] = "";
    gethostname(h, sizeof(h) - 1);
    return std::string(h);
  }();
  const char* tag = level == LogLevel::kWarn ? " WARN" : "";
  std::string r = rank < 0 ? "-" : std::to_string(rank);
  std::lock_guard<std::mutex> lock(gMutex);
  FILE* f = gFile ? gFile : stderr;
  std::fprintf(f, "%s:%d:%s [%s]%s %s\n", host.c_str(), static_cast<int>(getpid()), r.c_str(), subsysName(subsys), tag,
               text.c_str());
  std::fflush(f);
}

}  // namespace myriad
