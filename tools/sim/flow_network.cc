// FlowNetwork: a flow is done when fewer than kEpsilonBytes are left (rates are doubles).
#include "tools/sim/flow_network.h"

#include <algorithm>

#include "tools/sim/max_min.h"

namespace myriad::netsim {
namespace {
constexpr double kEpsilonBytes = 1e-3;
}

FlowNetwork::FlowNetwork(std::vector<double> capacity)
    : capacity_(std::move(capacity)), carried_(capacity_.size(), 0.0) {}

int FlowNetwork::start(std::vector<int> links, double bytes, uint64_t tag) {
  int id;
  if (!free_.empty()) {
    id = free_.back(), free_.pop_back();
  } else {
    id = static_cast<int>(flows_.size()), flows_.emplace_back();
  }
  flows_[static_cast<size_t>(id)] = {std::move(links), bytes, 0, tag};
  active_.push_back(id);
  rerate();
  return id;
}

double FlowNetwork::nextFinish() const {
  double t = kForever;
  for (int id : active_) {
    const Flow& f = flows_[static_cast<size_t>(id)];
    if (f.rate > 0 && f.left != kForever) t = std::min(t, f.left / f.rate);
  }
  return t;
}

void FlowNetwork::advance(double dt, std::vector<uint64_t>* finished) {
  bool changed = false;
  for (size_t i = 0; i < active_.size();) {
    Flow& f = flows_[static_cast<size_t>(active_[i])];
    double moved = f.rate * dt;
    if (f.left != kForever) moved = std::min(moved, f.left), f.left -= moved;
    for (int l : f.links) carried_[static_cast<size_t>(l)] += moved;
    if (f.left != kForever && f.left < kEpsilonBytes) {
      finished->push_back(f.tag);
      free_.push_back(active_[i]);
      active_[i] = active_.back(), active_.pop_back();
      changed = true;
    } else {
      ++i;
    }
  }
  if (changed) rerate();
}

void FlowNetwork::rerate() {
  std::vector<std::vector<int>> paths;
  paths.reserve(active_.size());
  for (int id : active_) paths.push_back(flows_[static_cast<size_t>(id)].links);
  std::vector<double> r = maxMinRates(paths, capacity_);
  for (size_t i = 0; i < active_.size(); ++i) flows_[static_cast<size_t>(active_[i])].rate = r[i];
}

}  // namespace myriad::netsim
