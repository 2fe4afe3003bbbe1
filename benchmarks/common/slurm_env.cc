// Slurm hostlists: "prefix[ranges]suffix[ranges]..." entries separated by commas outside brackets; a range is
// "a" or "a-b" and a bracket holds ranges separated by commas. The first host takes the first value of every
// bracket, printed with the width of its lower bound (Slurm's zero padding).
#include "benchmarks/common/slurm_env.h"

#include <cstdlib>

namespace myriad::bench {
namespace {

bool isDigits(const std::string& s) {
  if (s.empty()) return false;
  for (char c : s) {
    if (c < '0' || c > '9') return false;
  }
  return true;
}

// One bracket's ranges ("01-04,07"); *first gets the first value as written. Errors name `where`.
bool parseRanges(const std::string& text, const std::string& where, std::string* first, std::string* error) {
  if (text.empty()) {
    *error = "empty brackets in " + where;
    return false;
  }
  size_t start = 0;
  while (true) {
    const size_t comma = text.find(',', start);
    const std::string range = text.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    const size_t dash = range.find('-');
    const std::string lo = range.substr(0, dash);
    const std::string hi = dash == std::string::npos ? lo : range.substr(dash + 1);
    if (!isDigits(lo) || !isDigits(hi) || lo.size() > 9 || hi.size() > 9) {
      *error = "range '" + range + "' in " + where + " is not a number or number-number";
      return false;
    }
    if (std::atol(hi.c_str()) < std::atol(lo.c_str())) {
      *error = "range '" + range + "' in " + where + " runs backwards";
      return false;
    }
    if (start == 0) *first = lo;
    if (comma == std::string::npos) return true;
    start = comma + 1;
  }
}

// One entry ("gpu-a[1-2]"); *first gets its first host.
bool parseEntry(const std::string& entry, std::string* first, std::string* error) {
  const std::string where = "'" + entry + "'";
  if (entry.empty()) {
    *error = "empty host name";
    return false;
  }
  first->clear();
  size_t i = 0;
  while (i < entry.size()) {
    const char c = entry[i];
    if (c == ']') {
      *error = "']' without '[' in " + where;
      return false;
    }
    if (c != '[') {
      first->push_back(c);
      ++i;
      continue;
    }
    const size_t close = entry.find(']', i + 1);
    if (close == std::string::npos) {
      *error = "'[' without ']' in " + where;
      return false;
    }
    const std::string inside = entry.substr(i + 1, close - i - 1);
    if (inside.find('[') != std::string::npos) {
      *error = "nested '[' in " + where;
      return false;
    }
    std::string value;
    if (!parseRanges(inside, where, &value, error)) return false;
    *first += value;
    i = close + 1;
  }
  return true;
}

// A decimal number below 2^32 (Slurm's ids are 32 bits).
bool parseId(const std::string& text, uint64_t* out) {
  if (!isDigits(text) || text.size() > 10) return false;
  *out = std::strtoull(text.c_str(), nullptr, 10);
  return *out <= 0xffffffffull;
}

const char* env(const char* name) {
  const char* v = std::getenv(name);
  return v != nullptr && *v != '\0' ? v : nullptr;
}

}  // namespace

bool slurmFirstHost(const std::string& hostlist, std::string* host, std::string* error) {
  if (hostlist.empty()) {
    *error = "empty hostlist";
    return false;
  }
  std::string first;
  size_t start = 0;
  int depth = 0;
  for (size_t i = 0; i <= hostlist.size(); ++i) {
    const char c = i < hostlist.size() ? hostlist[i] : ',';
    if (c == '[') ++depth;
    if (c == ']') --depth;
    if (c != ',' || (depth > 0 && i < hostlist.size())) continue;  // an unclosed '[' ends at the end
    std::string entryHost;
    std::string entryError;
    if (!parseEntry(hostlist.substr(start, i - start), &entryHost, &entryError)) {
      *error = "hostlist '" + hostlist + "': " + entryError;
      return false;
    }
    if (start == 0) first = entryHost;
    start = i + 1;
    depth = 0;  // a stray ']' was reported by parseEntry already
  }
  *host = first;
  return true;
}

bool slurmPort(const std::string& jobId, const std::string& stepId, int* port, std::string* error) {
  uint64_t job = 0;
  uint64_t step = 0;
  if (!parseId(jobId, &job)) {
    *error = "job id '" + jobId + "' is not a decimal number below 2^32";
    return false;
  }
  if (!parseId(stepId, &step)) {
    *error = "step id '" + stepId + "' is not a decimal number below 2^32";
    return false;
  }
  *port = kSlurmPortBase + static_cast<int>((job * kSlurmPortStride + step) % kSlurmPortSpan);
  return true;
}

bool slurmCommId(std::string* commId, std::string* error) {
  const char* listName = env("SLURM_STEP_NODELIST") != nullptr ? "SLURM_STEP_NODELIST" : "SLURM_JOB_NODELIST";
  const char* names[] = {listName, "SLURM_JOB_ID", "SLURM_STEP_ID"};
  for (const char* name : names) {
    if (env(name) == nullptr) {
      *error = std::string(name) + " is not set (SLURM_STEP_NODELIST or SLURM_JOB_NODELIST, SLURM_JOB_ID and " +
               "SLURM_STEP_ID make the rendezvous of an srun step)";
      return false;
    }
  }
  std::string host;
  std::string why;
  if (!slurmFirstHost(env(listName), &host, &why)) {
    *error = std::string(listName) + ": " + why;
    return false;
  }
  int port = 0;
  if (!slurmPort(env("SLURM_JOB_ID"), env("SLURM_STEP_ID"), &port, &why)) {
    *error = "SLURM_JOB_ID/SLURM_STEP_ID: " + why;
    return false;
  }
  *commId = host + ":" + std::to_string(port);
  return true;
}

}  // namespace myriad::bench
