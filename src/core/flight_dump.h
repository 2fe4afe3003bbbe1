// The flight record as a JSON document: what myrCommDump and MYRIAD_DUMP_ON_ERROR write and myriad-trace
// reads (docs/failures.md lists the fields). Written by hand, not with nlohmann-json: libmyriad is installed
// and packaged without a JSON dependency (the tools find nlohmann-json only optionally), and one flat
// document needs nothing but a correct string escaper. Times are steady-clock milliseconds (comparable
// between the ranks of one host) plus the wall clock at the dump, to line up hosts.
#pragma once

#include <chrono>
#include <string>
#include <string_view>

#include "base/status.h"
#include "core/flight_record.h"

namespace myriad {

class Comm;

inline constexpr int kFlightFormatVersion = 1;

// Who wrote a dump, when and why.
struct DumpHeader {
  int rank = 0;
  int nranks = 0;
  std::string host;
  int pid = 0;
  std::string comm;    // the communicator's tag
  std::string reason;  // "myrCommDump", "error"
  Clock::time_point steadyNow{};
  std::chrono::system_clock::time_point wallNow{};
  Status firstError;  // the communicator's first error, if any
};

// The inside of a JSON string: quotes, backslashes and control characters escaped, invalid UTF-8 replaced by
// U+FFFD, so that any text (host names, errno messages) makes a valid document.
std::string jsonEscape(std::string_view s);
std::string flightRecordJson(const DumpHeader& h, const FlightSnapshot& snap);

// Writes the communicator's record to `path` (through a temporary file and a rename: a reader never sees
// half a dump).
Status writeFlightRecord(Comm& comm, const std::string& path, const std::string& reason);
// MYRIAD_DUMP_ON_ERROR's file for this communicator: <dir>/myriad-<host>-<pid>-rank<r>.json.
std::string dumpOnErrorPath(const Comm& comm, const std::string& dir);
// Called once, when the communicator records its first error; failures to write are logged, not raised.
void dumpOnError(Comm& comm);

}  // namespace myriad
