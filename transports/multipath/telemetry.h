// Telemetry of path sets: per path (port, state, bytes, throughput, service time p50/p99, re-paths) and per
// peer, published by each connection after every control round into a process-wide registry that a debug call
// reads (myrDebugNetPaths) and NET logs print. Invariant: the registry holds copies, taken under its lock, so
// a reader never touches a connection's live state.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "transports/multipath/control.h"
#include "transports/multipath/path_set.h"

namespace myriad::mp {

struct PathTelemetry {
  int slot = 0;
  int position = -1;
  uint16_t port = 0;
  std::string state;
  uint64_t bytes = 0;     // acknowledged payload bytes it carried
  double throughput = 0;  // bytes/s, EWMA
  double p50Ms = 0, p99Ms = 0;
  uint32_t repaths = 0;
  uint64_t window = 0;  // its coupled congestion window in bytes (coupled_window.h); 0: not coupled
};

struct PeerTelemetry {
  std::string comm;       // the communicator's tag
  std::string transport;  // "tcp" or "rdma"
  int rank = 0, peer = 0;
  uint64_t bytes = 0, chunks = 0, duplicates = 0, quarantines = 0, repaths = 0;
  uint64_t rerolls = 0;          // spares given a fresh port because scouting found them no faster
  uint64_t rerollDecisions = 0;  // re-path decisions that re-rolled spares (each re-rolls every spare behind)
  uint64_t losses = 0;           // loss episodes that halved a path's coupled window
  int rounds = 0;
  double throughput = 0;
  bool adaptive = true;
  bool stoodDown = false;  // MYRIAD_NET_PATHS=auto: the paths measured alike; spares closed, no re-paths
  std::vector<PathTelemetry> paths;
};

// Keeps the last kKeep samples for quantiles. Telemetry asks for them every control round, so they come from
// a sorted copy that is remade only once a sixteenth of the window is new (or it was empty): a quantile lags
// by at most that many samples, and costs one sort per 32 samples instead of a selection per call.
class LatencyWindow {
 public:
  void add(double sec);
  double quantile(double q) const;

 private:
  std::vector<double> v_;
  size_t next_ = 0;
  mutable std::vector<double> sorted_;
  mutable size_t newSinceSort_ = 0;
  static constexpr size_t kKeep = 512;
};

void publishTelemetry(const PeerTelemetry& t);
void forgetTelemetry(const std::string& comm, int peer);
// Every entry of communicator `comm` (all when empty) published by `transport` (any when empty).
std::vector<PeerTelemetry> telemetrySnapshot(const std::string& comm, const std::string& transport = "");
// A table, one line per path, grouped by peer.
std::string formatTelemetry(const std::vector<PeerTelemetry>& peers);

// One path's row, from what every path set keeps about it: its Path, the payload bytes it carried, the
// control loop's view of it (null before its first round) and its service-time window.
PathTelemetry describePath(int slot, const Path& p, uint64_t bytes, const PathView* view, const LatencyWindow& latency);

}  // namespace myriad::mp
