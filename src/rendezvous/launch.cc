// detectLauncher: a table of the launchers' variable names, tried in order; the first launcher with its rank
// or size set decides, so a malformed Open MPI value is an error rather than a silent fall-through to Slurm.
#include "rendezvous/launch.h"

#include <cerrno>
#include <climits>
#include <cstdlib>

namespace myriad {
namespace {

struct LauncherVars {
  const char* kind;
  const char* rank;
  const char* size;
  const char* localRanks[2];  // the first one set is the local rank; nullptr ends the list
};

constexpr LauncherVars kLaunchers[] = {
    {"ompi", "OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE", {"OMPI_COMM_WORLD_LOCAL_RANK", nullptr}},
    {"pmi", "PMI_RANK", "PMI_SIZE", {"MPI_LOCALRANKID", "PMI_LOCAL_RANK"}},
    {"slurm", "SLURM_PROCID", "SLURM_NTASKS", {"SLURM_LOCALID", nullptr}},
    {"torchrun", "RANK", "WORLD_SIZE", {"LOCAL_RANK", nullptr}},
};

const char* env(const char* name) {
  const char* v = name ? std::getenv(name) : nullptr;
  return v && *v ? v : nullptr;
}

// A non-negative decimal int; anything else is an InvalidArgument naming the variable.
Status readCount(const char* name, int* out) {
  const char* text = env(name);
  if (!text) return invalidArgument(std::string(name) + " is not set");
  char* end = nullptr;
  errno = 0;
  long v = std::strtol(text, &end, 10);
  if (*text < '0' || *text > '9' || *end != '\0' || errno != 0 || v > INT_MAX)
    return invalidArgument(std::string(name) + "='" + text + "' is not a non-negative integer");
  *out = static_cast<int>(v);
  return Status::ok();
}

Result<LaunchInfo> readLauncher(const LauncherVars& l) {
  LaunchInfo info;
  info.kind = l.kind;
  std::string who = std::string(" (") + l.kind + " launcher detected)";
  if (!env(l.rank)) return invalidArgument(std::string(l.size) + " is set but " + l.rank + " is not" + who);
  if (!env(l.size)) return invalidArgument(std::string(l.rank) + " is set but " + l.size + " is not" + who);
  MYR_TRY(readCount(l.rank, &info.rank));
  MYR_TRY(readCount(l.size, &info.size));
  if (info.size < 1) return invalidArgument(std::string(l.size) + "=0 is not a positive rank count" + who);
  if (info.rank >= info.size)
    return invalidArgument(std::string(l.rank) + "=" + std::to_string(info.rank) + " is not below " + l.size + "=" +
                           std::to_string(info.size));
  for (const char* name : l.localRanks) {
    if (!env(name)) continue;
    MYR_TRY(readCount(name, &info.localRank));
    if (info.localRank >= info.size)
      return invalidArgument(std::string(name) + "=" + std::to_string(info.localRank) + " is not below " + l.size +
                             "=" + std::to_string(info.size));
    break;
  }
  return info;
}

}  // namespace

Result<LaunchInfo> detectLauncher() {
  for (const LauncherVars& l : kLaunchers) {
    if (env(l.rank) || env(l.size)) return readLauncher(l);
  }
  return LaunchInfo{};
}

}  // namespace myriad
