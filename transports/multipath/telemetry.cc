// Telemetry registry and formatting (see telemetry.h).
#include "transports/multipath/telemetry.h"

#include <algorithm>
#include <cstdio>
#include <mutex>

namespace myriad::mp {
namespace {
std::mutex& mu() {
  static std::mutex m;
  return m;
}
std::vector<PeerTelemetry>& registry() {
  static std::vector<PeerTelemetry> r;
  return r;
}
}  // namespace

void LatencyWindow::add(double sec) {
  ++newSinceSort_;
  if (v_.size() < kKeep) {
    v_.push_back(sec);
    return;
  }
  v_[next_] = sec;
  next_ = (next_ + 1) % kKeep;
}

double LatencyWindow::quantile(double q) const {
  if (v_.empty()) return 0;
  if (sorted_.empty() || newSinceSort_ >= std::max<size_t>(1, v_.size() / 16)) {
    sorted_ = v_;
    std::sort(sorted_.begin(), sorted_.end());
    newSinceSort_ = 0;
  }
  size_t k = std::min(sorted_.size() - 1, static_cast<size_t>(q * static_cast<double>(sorted_.size())));
  return sorted_[k];
}

void publishTelemetry(const PeerTelemetry& t) {
  std::lock_guard<std::mutex> lock(mu());
  for (auto& e : registry())
    if (e.comm == t.comm && e.rank == t.rank && e.peer == t.peer) return void(e = t);
  registry().push_back(t);
}

void forgetTelemetry(const std::string& comm, int peer) {
  std::lock_guard<std::mutex> lock(mu());
  std::erase_if(registry(), [&](const PeerTelemetry& e) { return e.comm == comm && e.peer == peer; });
}

std::vector<PeerTelemetry> telemetrySnapshot(const std::string& comm, const std::string& transport) {
  std::lock_guard<std::mutex> lock(mu());
  std::vector<PeerTelemetry> out;
  for (const auto& e : registry())
    if ((comm.empty() || e.comm == comm) && (transport.empty() || e.transport == transport)) out.push_back(e);
  return out;
}

PathTelemetry describePath(int slot, const Path& p, uint64_t bytes, const PathView* view,
                           const LatencyWindow& latency) {
  PathTelemetry pt;
  pt.slot = slot;
  pt.position = p.position;
  pt.port = p.port;
  pt.state = pathStateName(p.state);
  pt.bytes = bytes;
  pt.throughput = view ? view->throughput : 0;
  pt.p50Ms = latency.quantile(0.5) * 1e3;
  pt.p99Ms = latency.quantile(0.99) * 1e3;
  pt.repaths = p.repaths;
  return pt;
}

std::string formatTelemetry(const std::vector<PeerTelemetry>& peers) {
  std::string out;
  char line[256];
  for (const auto& p : peers) {
    std::snprintf(line, sizeof(line),
                  "# paths rank %d -> peer %d (%s): %.1f MB, %.1f MB/s, %llu chunks, %llu duplicates, %llu "
                  "re-paths, %llu spares re-rolled (%llu decisions), %llu quarantined, %d rounds, %llu losses\n",
                  p.rank, p.peer, p.adaptive ? (p.stoodDown ? "stood down" : "adaptive") : "static",
                  static_cast<double>(p.bytes) / 1e6, p.throughput / 1e6, static_cast<unsigned long long>(p.chunks),
                  static_cast<unsigned long long>(p.duplicates), static_cast<unsigned long long>(p.repaths),
                  static_cast<unsigned long long>(p.rerolls), static_cast<unsigned long long>(p.rerollDecisions),
                  static_cast<unsigned long long>(p.quarantines), p.rounds, static_cast<unsigned long long>(p.losses));
    out += line;
    out += "#   slot pos  port  state        MB      MB/s   p50 ms   p99 ms  re-paths  window KB\n";
    for (const auto& t : p.paths) {
      std::snprintf(line, sizeof(line), "#   %4d %3d %5u  %-11s %7.1f %8.1f %8.2f %8.2f %9u %10.0f\n", t.slot,
                    t.position, t.port, t.state.c_str(), static_cast<double>(t.bytes) / 1e6, t.throughput / 1e6,
                    t.p50Ms, t.p99Ms, t.repaths, static_cast<double>(t.window) / 1024);
      out += line;
    }
  }
  return out;
}

}  // namespace myriad::mp
