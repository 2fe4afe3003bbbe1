// FlowNetwork: a flow is done when fewer than kEpsilonBytes are left (rates are doubles).
#include "tools/sim/flow_network.h"

#include <algorithm>
#include <cmath>

namespace myriad::netsim {
namespace {
constexpr double kEpsilonBytes = 1e-3;
// Rates within this relative difference are the same rate: a recomputation's rounding does not move a flow.
constexpr double kSameRate = 1e-12;

bool moved(double from, double to) {
  return std::abs(to - from) > kSameRate * std::max(from, to);
}

// A filling over at most this many links finds each smallest share by scanning them; a larger one by a heap.
constexpr size_t kScanLinks = 48;

}  // namespace

FlowNetwork::FlowNetwork(std::vector<double> capacity)
    : capacity_(std::move(capacity)),
      carried_(capacity_.size(), 0.0),
      linkFlows_(capacity_.size()),
      linkDirty_(capacity_.size(), 0),
      users_(capacity_.size(), 0),
      leftCap_(capacity_.size(), 0.0),
      outsideMax_(capacity_.size(), 0.0),
      linkIn_(capacity_.size(), 0),
      linkRound_(capacity_.size(), 0) {}

int FlowNetwork::start(std::vector<int> links, double bytes, uint64_t tag) {
  int id;
  if (!free_.empty()) {
    id = free_.back(), free_.pop_back();
  } else {
    id = static_cast<int>(flows_.size()), flows_.emplace_back();
    flowIn_.push_back(0), next_.push_back(0), frozeAt_.push_back(-1);
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

// The rates after a change, found over a region that starts at the changed links and grows only as far as
// rates move (see the header). Every flow on a region link is a member; members share what the flows
// outside leave of each link they cross (outside rates held fixed) by progressive filling. The region then
// takes in the links of every member whose rate moved, and each link where a member froze but an outside
// flow there runs faster; once neither adds a link, every flow has a full link on which none runs faster
// (members by the filling and the check, the others because nothing on their links moved): the max-min
// fair allocation, which is unique.
void FlowNetwork::rerate() {
  if (dirty_.empty()) return;
  ++stats_.rerates;
  ++epoch_;
  region_.clear(), members_.clear();
  auto addLink = [&](int l) {
    if (linkIn_[static_cast<size_t>(l)] != epoch_) linkIn_[static_cast<size_t>(l)] = epoch_, region_.push_back(l);
  };
  for (int l : dirty_) linkDirty_[static_cast<size_t>(l)] = 0, addLink(l);
  dirty_.clear();
  for (size_t scanned = 0;;) {
    for (; scanned < region_.size(); ++scanned)
      for (int id : linkFlows_[static_cast<size_t>(region_[scanned])])
        if (flowIn_[static_cast<size_t>(id)] != epoch_)
          flowIn_[static_cast<size_t>(id)] = epoch_, members_.push_back(id);
    fill();
    ++stats_.rerateRounds;
    const size_t before = region_.size();
    for (int id : members_) {
      const Flow& f = flows_[static_cast<size_t>(id)];
      if (!moved(f.rate, next_[static_cast<size_t>(id)])) continue;
      for (int l : f.links) addLink(l);
    }
    for (int id : members_) {
      const int t = frozeAt_[static_cast<size_t>(id)];
      if (t >= 0 && linkIn_[static_cast<size_t>(t)] != epoch_ &&
          outsideMax_[static_cast<size_t>(t)] > next_[static_cast<size_t>(id)] * (1 + kSameRate))
        addLink(t);
    }
    if (region_.size() == before) break;
  }
  stats_.rerateFlows += members_.size(), stats_.rerateLinks += region_.size();
  for (int id : members_) {
    const double r = next_[static_cast<size_t>(id)];
    if (moved(flows_[static_cast<size_t>(id)].rate, r)) setRate(id, r);
  }
}

// Progressive filling over the members (maxMinRates' rule): the link with the smallest fair share (what
// the outside flows leave of it / its unfrozen members; ties to the lower index) freezes its unfrozen
// members at that share. Over a few links a scan finds it; over more, a heap with lazily dropped stale
// entries (shares only grow as flows freeze). Writes next_ and frozeAt_ of every member, and the fastest outside flow
// of each link it covers.
void FlowNetwork::fill() {
  ++round_;
  sub_.clear();
  // What each unfrozen member of link u may still take (rounding may leave a full link a hair below zero).
  auto share = [&](size_t u) { return std::max(0.0, leftCap_[u]) / users_[u]; };
  for (int id : members_) {
    frozeAt_[static_cast<size_t>(id)] = -1, next_[static_cast<size_t>(id)] = 0;
    for (int l : flows_[static_cast<size_t>(id)].links) {
      const auto u = static_cast<size_t>(l);
      if (linkRound_[u] != round_) linkRound_[u] = round_, sub_.push_back(l), users_[u] = 0, leftCap_[u] = capacity_[u];
      ++users_[u];
    }
  }
  for (int l : sub_) {
    const auto u = static_cast<size_t>(l);
    outsideMax_[u] = 0;
    if (linkIn_[u] != epoch_)  // a link outside the region: its outside flows keep their rates
      for (int o : linkFlows_[u])
        if (flowIn_[static_cast<size_t>(o)] != epoch_) {
          const double r = flows_[static_cast<size_t>(o)].rate;
          leftCap_[u] -= r, outsideMax_[u] = std::max(outsideMax_[u], r);
        }
  }
  // Freezes the unfrozen members of link t at `at`; movedShare(u) hears of every other link whose share moved.
  auto freeze = [&](size_t t, double at, auto&& movedShare) {
    for (int id : linkFlows_[t]) {
      if (flowIn_[static_cast<size_t>(id)] != epoch_ || frozeAt_[static_cast<size_t>(id)] >= 0) continue;
      frozeAt_[static_cast<size_t>(id)] = static_cast<int>(t), next_[static_cast<size_t>(id)] = at;
      for (int k : flows_[static_cast<size_t>(id)].links) {
        const auto u = static_cast<size_t>(k);
        leftCap_[u] -= at, --users_[u];
        if (u != t && users_[u] > 0) movedShare(u);
      }
    }
    leftCap_[t] = 0, users_[t] = 0;
  };
  // Few links (the usual region): the smallest share (ties to the lower link) by a scan of them all, each
  // time a link freezes.
  if (sub_.size() <= kScanLinks) {
    for (;;) {
      size_t t = SIZE_MAX;
      double least = 0;
      for (int l : sub_) {
        const auto u = static_cast<size_t>(l);
        if (users_[u] <= 0) continue;
        const double sh = share(u);
        if (t == SIZE_MAX || sh < least || (sh == least && u < t)) t = u, least = sh;
      }
      if (t == SIZE_MAX) return;
      freeze(t, least, [](size_t) {});
    }
  }
  std::vector<Share>& heap = heap_;  // a min-heap on (share, link)
  heap.clear();
  for (int l : sub_) heap.push_back({share(static_cast<size_t>(l)), l});
  std::make_heap(heap.begin(), heap.end(), std::greater<>{});
  while (!heap.empty()) {
    std::pop_heap(heap.begin(), heap.end(), std::greater<>{});
    const Share s = heap.back();
    heap.pop_back();
    const auto t = static_cast<size_t>(s.link);
    if (users_[t] <= 0 || share(t) != s.share) continue;  // stale
    freeze(t, s.share, [&](size_t u) {
      heap.push_back({share(u), static_cast<int>(u)}), std::push_heap(heap.begin(), heap.end(), std::greater<>{});
    });
  }
}

}  // namespace myriad::netsim
