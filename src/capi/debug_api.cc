// C API: debugging calls. myrDebugNetPaths copies out the multipath telemetry of the communicator's peers, as its
// network transports report it; myrCommDump writes the flight record, also of a communicator that failed.
#include <cstring>

#include "capi/handles.h"
#include "core/flight_dump.h"

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

extern "C" myrResult_t myrCommDump(myrComm_t comm, const char* path) {
  if (!path || !*path) return finish(comm, invalidArgument("path is NULL or empty"), __func__);
  auto c = ready(comm);  // a communicator that failed is ready for this: its record matters most
  if (!c.isOk()) return finish(comm, c.status(), __func__);
  return finish(comm, writeFlightRecord(*c.value(), path, "myrCommDump"), __func__);
}
