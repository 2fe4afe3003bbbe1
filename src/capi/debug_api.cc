// C API: debugging calls. myrDebugPeers says what carries the data to each peer and which algorithm ran last;
// myrDebugNetPaths copies out the multipath telemetry of the communicator's peers, as its
// network transports report it; myrCommDump writes the flight record, also of a communicator that failed.
#include <cstring>

#include "capi/handles.h"
#include "core/flight_dump.h"

using namespace myriad;
using namespace myriad::capi;

namespace {

// Copies text out with the debugging calls' convention: at most *len bytes with the NUL, *len set to the need.
void copyOut(const std::string& text, char* buf, size_t* len) {
  const size_t room = *len;
  *len = text.size() + 1;
  if (buf && room > 0) {
    const size_t n = std::min(room - 1, text.size());
    std::memcpy(buf, text.data(), n);
    buf[n] = '\0';
  }
}

// The body of a call that copies out one of the communicator's texts.
myrResult_t debugText(myrComm_t comm, char* buf, size_t* len, std::string (Comm::*text)() const, const char* call) {
  if (!len) return finish(comm, invalidArgument("len is NULL"), call);
  auto c = ready(comm);
  if (!c.isOk()) return finish(comm, c.status(), call);
  copyOut((c.value()->*text)(), buf, len);
  return myrSuccess;
}

}  // namespace

extern "C" myrResult_t myrDebugNetPaths(myrComm_t comm, char* buf, size_t* len) {
  return debugText(comm, buf, len, &Comm::netTelemetry, __func__);
}

extern "C" myrResult_t myrDebugPeers(myrComm_t comm, char* buf, size_t* len) {
  return debugText(comm, buf, len, &Comm::describePeers, __func__);
}

extern "C" myrResult_t myrCommDump(myrComm_t comm, const char* path) {
  if (!path || !*path) return finish(comm, invalidArgument("path is NULL or empty"), __func__);
  auto c = ready(comm);  // a communicator that failed is ready for this: its record matters most
  if (!c.isOk()) return finish(comm, c.status(), __func__);
  return finish(comm, writeFlightRecord(*c.value(), path, "myrCommDump"), __func__);
}
