// C API: myrLaunchInfo, the launcher detection of src/rendezvous/launch.h for programs that see only the
// public header (benchmarks, the torch plugin, users' own launch scripts).
#include <algorithm>
#include <cstring>

#include "capi/handles.h"
#include "rendezvous/launch.h"

extern "C" myrResult_t myrLaunchInfo(int* rank, int* nranks, int* localRank, char* launcher, size_t len) {
  auto detected = myriad::detectLauncher();
  if (!detected.isOk()) return myriad::capi::finish(nullptr, detected.status(), __func__);
  const myriad::LaunchInfo& info = detected.value();
  if (rank) *rank = info.rank;
  if (nranks) *nranks = info.size;
  if (localRank) *localRank = info.localRank;
  if (launcher && len > 0) {
    const size_t n = std::min(len - 1, info.kind.size());
    std::memcpy(launcher, info.kind.data(), n);
    launcher[n] = '\0';
  }
  return myrSuccess;
}
