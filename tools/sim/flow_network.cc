// FlowNetwork: a flow is done when fewer than kEpsilonBytes are left (rates are doubles).
#include "tools/sim/flow_network.h"

#include <algorithm>

namespace myriad::netsim {
namespace {
constexpr double kEpsilonBytes = 1e-3;

struct Share {
  double share;
  int link;
  bool operator>(const Share& o) const { return share != o.share ? share > o.share : link > o.link; }
};
}  // namespace

FlowNetwork::FlowNetwork(std::vector<double> capacity)
    : capacity_(std::move(capacity)),
      carried_(capacity_.size(), 0.0),
      linkFlows_(capacity_.size()),
      linkDirty_(capacity_.size(), 0),
      users_(capacity_.size(), 0),
      leftCap_(capacity_.size(), 0.0),
      linkMark_(capacity_.size(), 0) {}

int FlowNetwork::start(std::vector<int> links, double bytes, uint64_t tag) {
  int id;
  if (!free_.empty()) {
    id = free_.back(), free_.pop_back();
  } else {
    id = static_cast<int>(flows_.size()), flows_.emplace_back(), flowMark_.push_back(0);
  }
  Flow& f = flows_[static_cast<size_t>(id)];
  f.links = std::move(links);
  f.slot.resize(f.links.size());
  f.left = bytes, f.since = now_, f.rate = 0, f.tag = tag, ++f.version, f.live = true;
  for (size_t k = 0; k < f.links.size(); ++k) {
    const auto l = static_cast<size_t>(f.links[k]);
    f.slot[k] = static_cast<int>(linkFlows_[l].size());
    linkFlows_[l].push_back(id);
    if (!linkDirty_[l]) linkDirty_[l] = 1, dirty_.push_back(f.links[k]);
  }
  ++active_;
  return id;
}

std::vector<std::pair<double, uint64_t>> FlowNetwork::removeOn(int link) {
  std::vector<std::pair<double, uint64_t>> out;
  while (!linkFlows_[static_cast<size_t>(link)].empty()) {
    const int id = linkFlows_[static_cast<size_t>(link)].back();
    Flow& f = flows_[static_cast<size_t>(id)];
    settle(f);
    out.emplace_back(f.left, f.tag);
    detach(id);
  }
  return out;
}

void FlowNetwork::settle(Flow& f) {
  const double dt = now_ - f.since;
  if (dt <= 0) return;
  double moved = f.rate * dt;
  if (f.left != kForever) moved = std::min(moved, f.left), f.left -= moved;
  for (int l : f.links) carried_[static_cast<size_t>(l)] += moved;
  f.since = now_;
}

void FlowNetwork::setRate(int id, double r) {
  Flow& f = flows_[static_cast<size_t>(id)];
  if (r == f.rate) return;
  settle(f);
  f.since = now_, f.rate = r, ++f.version;
  if (r > 0 && f.left != kForever) due_.push({now_ + f.left / r, id, f.version});
}

void FlowNetwork::detach(int id) {
  Flow& f = flows_[static_cast<size_t>(id)];
  for (size_t k = 0; k < f.links.size(); ++k) {
    const auto l = static_cast<size_t>(f.links[k]);
    std::vector<int>& on = linkFlows_[l];
    const int moved = on.back(), at = f.slot[k];
    on[static_cast<size_t>(at)] = moved;
    Flow& m = flows_[static_cast<size_t>(moved)];
    for (size_t j = 0; j < m.links.size(); ++j)
      if (static_cast<size_t>(m.links[j]) == l && m.slot[j] == static_cast<int>(on.size()) - 1) {
        m.slot[j] = at;
        break;
      }
    on.pop_back();
    if (!linkDirty_[l]) linkDirty_[l] = 1, dirty_.push_back(f.links[k]);
  }
  f.live = false, ++f.version, f.rate = 0;
  --active_;
  free_.push_back(id);
}

double FlowNetwork::nextFinish() {
  rerate();
  while (!due_.empty()) {
    const Due& d = due_.top();
    const Flow& f = flows_[static_cast<size_t>(d.id)];
    if (f.live && f.version == d.version) return std::max(0.0, d.at - now_);
    due_.pop();
  }
  return kForever;
}

void FlowNetwork::advance(double dt, std::vector<uint64_t>* finished) {
  rerate();
  now_ += dt;
  while (!due_.empty()) {
    const Due d = due_.top();
    Flow& f = flows_[static_cast<size_t>(d.id)];
    if (!f.live || f.version != d.version) {
      due_.pop();
      continue;
    }
    if (f.left - f.rate * (now_ - f.since) >= kEpsilonBytes) break;
    due_.pop();
    settle(f);
    finished->push_back(f.tag);
    detach(d.id);
  }
}

double FlowNetwork::rate(int flow) {
  rerate();
  return flows_[static_cast<size_t>(flow)].rate;
}

const std::vector<double>& FlowNetwork::carried() {
  for (Flow& f : flows_)
    if (f.live) settle(f);
  return carried_;
}

// Progressive filling (maxMinRates' rule) over the component of the dirty links: the link with the
// smallest fair share (left capacity / unfrozen users; ties to the lower index) freezes its unfrozen flows
// at that share. Shares only grow as flows freeze, so a heap with lazily dropped stale entries finds it.
void FlowNetwork::rerate() {
  if (dirty_.empty()) return;
  ++stats_.rerates;
  mark_ += 2;  // linkMark_/flowMark_ == mark_: in the component; flowMark_ == mark_ + 1: frozen
  compLinks_.clear(), compFlows_.clear();
  for (int l : dirty_) {
    linkDirty_[static_cast<size_t>(l)] = 0;
    if (linkMark_[static_cast<size_t>(l)] != mark_) linkMark_[static_cast<size_t>(l)] = mark_, compLinks_.push_back(l);
  }
  dirty_.clear();
  for (size_t i = 0; i < compLinks_.size(); ++i)
    for (int id : linkFlows_[static_cast<size_t>(compLinks_[i])]) {
      if (flowMark_[static_cast<size_t>(id)] == mark_) continue;
      flowMark_[static_cast<size_t>(id)] = mark_, compFlows_.push_back(id);
      for (int k : flows_[static_cast<size_t>(id)].links)
        if (linkMark_[static_cast<size_t>(k)] != mark_)
          linkMark_[static_cast<size_t>(k)] = mark_, compLinks_.push_back(k);
    }
  stats_.rerateFlows += compFlows_.size(), stats_.rerateLinks += compLinks_.size();
  std::vector<Share> heap;
  heap.reserve(compLinks_.size());
  for (int l : compLinks_) {
    const auto u = static_cast<size_t>(l);
    users_[u] = static_cast<int>(linkFlows_[u].size()), leftCap_[u] = capacity_[u];
    if (users_[u] > 0) heap.push_back({leftCap_[u] / users_[u], l});
  }
  std::priority_queue<Share, std::vector<Share>, std::greater<>> q(std::greater<>{}, std::move(heap));
  std::vector<std::pair<int, double>> rates;
  rates.reserve(compFlows_.size());
  while (!q.empty()) {
    const Share s = q.top();
    q.pop();
    const auto t = static_cast<size_t>(s.link);
    if (users_[t] <= 0 || leftCap_[t] / users_[t] != s.share) continue;  // stale
    for (int id : linkFlows_[t]) {
      if (flowMark_[static_cast<size_t>(id)] != mark_) continue;
      flowMark_[static_cast<size_t>(id)] = mark_ + 1;
      rates.emplace_back(id, s.share);
      for (int k : flows_[static_cast<size_t>(id)].links) {
        const auto u = static_cast<size_t>(k);
        leftCap_[u] -= s.share, --users_[u];
        if (u != t && users_[u] > 0) q.push({leftCap_[u] / users_[u], k});
      }
    }
    leftCap_[t] = 0, users_[t] = 0;
  }
  for (auto [id, r] : rates) setRate(id, r);
}

}  // namespace myriad::netsim
