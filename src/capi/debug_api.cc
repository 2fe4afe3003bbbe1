// C API: debugging calls. myrDebugNetPaths copies out the multipath telemetry of the communicator's peers, as its
// network transports report it.
#include <cstring>

#include "capi/handles.h"

using namespace myriad;
using namespace myriad::capi;

extern "C" myrResult_t myrDebugNetPaths(myrComm_t comm, char* buf, size_t* len) {
  if (!len) return finish(comm, invalidArgument("len is NULL"), __func__);
  auto c = ready(comm);
  if (!c.isOk()) return finish(comm, c.status(), __func__);
  std::string text = c.value()->netTelemetry();
  size_t room = *len;
  *len = text.size() + 1;
  if (buf && room > 0) {
    size_t n = std::min(room - 1, text.size());
    std::memcpy(buf, text.data(), n);
    buf[n] = '\0';
  }
  return myrSuccess;
}
