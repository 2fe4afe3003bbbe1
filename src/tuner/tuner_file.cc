// Reading and writing the calibration file (format: tuner_file.h).
#include "tuner/tuner_file.h"

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <set>
#include <sstream>

namespace myriad {
namespace {

std::string fmt(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", v);
  return buf;
}

// The constant `key` names, null when none.
double* slot(TunerConstants& k, const std::string& key) {
  if (key == "reduce.gbps") return &k.reduceGbps;
  if (key == "copy.gbps") return &k.copyGbps;
  if (key == "call_us") return &k.callUs;
  for (int c = 0; c < kLinkClasses; ++c) {
    std::string name = linkClassName(static_cast<LinkClass>(c));
    LinkCost& l = k.links[static_cast<size_t>(c)];
    if (key == name + ".alpha_us") return &l.alphaUs;
    if (key == name + ".gbps") return &l.gbps;
    if (key == name + ".overhead_us") return &l.overheadUs;
  }
  return nullptr;
}

std::string knownKeys() {
  std::string out;
  for (int c = 0; c < kLinkClasses; ++c) {
    std::string name = linkClassName(static_cast<LinkClass>(c));
    out += name + ".alpha_us, " + name + ".overhead_us, " + name + ".gbps, ";
  }
  return out + "reduce.gbps, copy.gbps, call_us";
}

}  // namespace

Result<TunerConstants> parseTunerFile(const std::string& text, const std::string& fileName,
                                      const TunerConstants& base) {
  TunerConstants k = base;
  std::set<std::string> seen;
  std::istringstream in(text);
  std::string line;
  for (int lineNo = 1; std::getline(in, line); ++lineNo) {
    auto where = [&] { return fileName + ":" + std::to_string(lineNo) + ": "; };
    size_t hash = line.find('#');
    if (hash != std::string::npos) line.resize(hash);
    std::istringstream words(line);
    std::string key, value, extra;
    if (!(words >> key)) continue;
    if (!(words >> value)) return invalidArgument(where() + "'" + key + "' has no value (expected: key value)");
    if (words >> extra) return invalidArgument(where() + "more than one value after '" + key + "'");
    double* dst = slot(k, key);
    if (!dst) return invalidArgument(where() + "unknown key '" + key + "'; known keys: " + knownKeys());
    if (!seen.insert(key).second) return invalidArgument(where() + "'" + key + "' is given a second time");
    errno = 0;
    char* end = nullptr;
    double v = std::strtod(value.c_str(), &end);
    bool zeroOk = key == "call_us" || key.ends_with(".overhead_us") || key.ends_with(".alpha_us");
    if (errno || end != value.c_str() + value.size() || !std::isfinite(v) || v < 0 || (v == 0 && !zeroOk))
      return invalidArgument(where() + "'" + key + "' needs a " + (zeroOk ? "non-negative" : "positive") +
                             " number, not '" + value + "'");
    *dst = v;
  }
  return k;
}

Result<TunerConstants> loadTunerFile(const std::string& path) {
  std::ifstream f(path);
  if (!f) return invalidArgument("MYRIAD_TUNER_FILE " + path + ": cannot be read: " + std::strerror(errno));
  std::stringstream text;
  text << f.rdbuf();
  return parseTunerFile(text.str(), path);
}

std::string writeTunerFile(const TunerConstants& k) {
  std::string out =
      "# Myriad tuner constants (MYRIAD_TUNER_FILE): per link class latency (us), per-message overhead at each end "
      "(us) and bandwidth (GB/s)\n";
  for (int c = 0; c < kLinkClasses; ++c) {
    std::string name = linkClassName(static_cast<LinkClass>(c));
    const LinkCost& l = k.links[static_cast<size_t>(c)];
    out += name + ".alpha_us " + fmt(l.alphaUs) + "\n" + name + ".overhead_us " + fmt(l.overheadUs) + "\n" + name +
           ".gbps " + fmt(l.gbps) + "\n";
  }
  out += "reduce.gbps " + fmt(k.reduceGbps) + "\ncopy.gbps " + fmt(k.copyGbps) + "\ncall_us " + fmt(k.callUs) + "\n";
  return out;
}

}  // namespace myriad
