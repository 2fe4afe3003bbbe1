// myriad-trace's reading of flight-record dumps (src/core/flight_dump.cc writes them): a parser that checks
// every field it uses, so that a malformed or hostile file is an error message and never a crash, and the
// analysis of one communicator's dumps — each rank's last call, whom it waits on, the wait-for chains and
// the first culprit: the rank the others end up waiting on.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace myriad::trace {

struct PeerTraffic {
  int rank = 0;
  uint64_t sendBytes = 0;
  uint64_t recvBytes = 0;
};

struct Call {
  uint64_t seq = 0;
  std::string op, dtype, redop, algorithm, path, status, error;
  uint64_t count = 0;
  int root = -1;
  double startMs = 0;
  std::optional<double> endMs;
  int waitedOn = -1;  // -1: no wait noted
  long long waitedMs = 0;
  std::vector<PeerTraffic> peers;
};

struct Dump {
  std::string source;  // the file it came from
  int rank = 0;
  int nranks = 0;
  std::string host, comm, reason, dumpWall;
  long long pid = 0;
  double dumpMs = 0;
  // The state at the dump.
  uint64_t seq = 0;
  bool inCall = false;
  std::string op, dtype;
  uint64_t count = 0;
  std::optional<double> enteredMs, finishedMs;
  int waitsOn = -1;
  long long silentMs = 0;
  std::optional<std::string> error;  // "<code>: <message>"
  std::vector<Call> calls;           // oldest first

  // The record of call `seq`, if the ring still holds it.
  const Call* call(uint64_t seq) const;
};

// Parses one dump; on failure returns nothing and sets *error to what is wrong.
std::optional<Dump> parseDump(const std::string& text, const std::string& source, std::string* error);

struct Analysis {
  std::string text;       // the report, for people
  int firstCulprit = -1;  // -1: nothing is stuck
  std::string culpritReason;
};

// The report on the dumps of one communicator (same comm tag); `dumps` is not empty.
Analysis analyse(const std::vector<Dump>& dumps);

}  // namespace myriad::trace
