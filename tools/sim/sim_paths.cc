// SimPaths (see sim_paths.h): the library's PathSet picks the ports; with the adaptive policy its PathKeeper
// judges them on virtual time and a named slot's position moves to a fresh port.
#include "tools/sim/sim_paths.h"

#include <chrono>

#include "base/clock.h"
#include "base/config.h"
#include "tools/sim/path_ports.h"
#include "transports/multipath/path_keeper.h"

namespace myriad::netsim {
namespace {

// The transport's chunk: service samples are times per chunk, as the transport measures them.
constexpr double kChunkBytes = kDefaultNetChunkBytes;

Clock::time_point virtualTime(double seconds) {
  return Clock::time_point(std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(seconds)));
}

}  // namespace

SimPaths::SimPaths(uint64_t seed, int src, int dst, int paths, PathPolicy policy, double now) {
  parts_.assign(static_cast<size_t>(paths), 0);
  if (policy == PathPolicy::kStatic || paths < 2) {
    ports_ = pathPorts(seed, src, dst, paths);
    return;
  }
  rates_.assign(static_cast<size_t>(paths), 0);
  // The same PathSet as pathPorts() (same seed, same draws), inside the keeper that will judge it.
  mp::PathKeeperOptions o;
  o.active = paths;
  o.seed = pathSeed(seed, src, dst);
  keeper_ = std::make_unique<mp::PathKeeper>(o);
  mp::PathSet& set = keeper_->set();
  for (int p = 0; p < paths; ++p) {
    const int slot = set.addPath(true);
    set.path(slot).state = mp::PathState::kActive;
    set.path(slot).position = p;
    ports_.push_back(set.path(slot).port);
    slots_.push_back(slot);
  }
  keeper_->startRoundAt(virtualTime(now));
}

SimPaths::~SimPaths() = default;
SimPaths::SimPaths(SimPaths&&) noexcept = default;
SimPaths& SimPaths::operator=(SimPaths&&) noexcept = default;

void SimPaths::split(double bytes) {
  const size_t n = parts_.size();
  if (rates_.empty()) {
    for (double& p : parts_) p = bytes / static_cast<double>(n);
    return;
  }
  double known = 0, sum = 0;
  for (double r : rates_)
    if (r > 0) known += 1, sum += r;
  const double mean = known > 0 ? sum / known : 1;  // an unmeasured path counts as the measured mean
  double total = 0;
  for (double r : rates_) total += r > 0 ? r : mean;
  for (size_t p = 0; p < n; ++p) parts_[p] = bytes * (rates_[p] > 0 ? rates_[p] : mean) / total;
}

bool SimPaths::served(int position, double seconds, double now) {
  if (!keeper_) return false;
  const double bytes = parts_[static_cast<size_t>(position)];
  if (seconds > 0) rates_[static_cast<size_t>(position)] = bytes / seconds;
  const double perChunk = bytes > kChunkBytes ? seconds * kChunkBytes / bytes : seconds;
  keeper_->served(slots_[static_cast<size_t>(position)], static_cast<uint64_t>(bytes), perChunk);
  const int named = keeper_->maybeRound(virtualTime(now));
  if (named < 0) return false;
  mp::PathSet& set = keeper_->set();
  const int at = set.path(named).position;
  const uint32_t repaths = set.path(named).repaths;
  if (at < 0) return false;
  // The transport's re-path: the old port is given up and tabu, the position takes a fresh one.
  set.path(named).state = mp::PathState::kClosed;
  set.path(named).position = -1;
  set.tabu(set.path(named).port);
  keeper_->forget(named);
  const int slot = set.addPath(true);  // grows the set: no reference into it is held across this
  mp::Path& fresh = set.path(slot);
  fresh.state = mp::PathState::kActive;
  fresh.position = at;
  fresh.repaths = repaths + 1;
  ports_[static_cast<size_t>(at)] = fresh.port;
  slots_[static_cast<size_t>(at)] = slot;
  rates_[static_cast<size_t>(at)] = 0;
  ++repaths_;
  return true;
}

}  // namespace myriad::netsim
