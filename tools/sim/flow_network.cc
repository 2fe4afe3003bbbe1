// FlowNetwork: a flow is done when fewer than kEpsilonBytes are left (rates are doubles).
#include "tools/sim/flow_network.h"

#include <algorithm>
#include <cmath>

#include "base/status.h"

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

FlowNetwork::FlowNetwork(std::vector<double> capacity) : links_(capacity.size()), carried_(capacity.size(), 0.0) {
  for (size_t l = 0; l < capacity.size(); ++l) links_[l].capacity = capacity[l];
}

int FlowNetwork::start(std::span<const int> links, double bytes, uint64_t tag) {
  MYR_ASSERT(links.size() <= kMaxLinks);
  int id;
  if (!free_.empty()) {
    id = free_.back(), free_.pop_back();
  } else {
    id = static_cast<int>(flows_.size()), flows_.emplace_back(), hot_.emplace_back();
  }
  Flow& f = flows_[static_cast<size_t>(id)];
  f.hops = static_cast<uint8_t>(links.size());
  f.left = bytes, f.since = now_, f.tag = tag, f.live = true;
  hot_[static_cast<size_t>(id)].rate = 0;
  for (size_t k = 0; k < links.size(); ++k) {
    f.links[k] = links[k];
    LinkState& l = links_[static_cast<size_t>(links[k])];
    f.slot[k] = static_cast<int>(l.flows.size());
    l.flows.push_back(id);
    if (!l.dirty) l.dirty = true, dirty_.push_back(links[k]);
  }
  ++active_;
  return id;
}

std::vector<std::pair<double, uint64_t>> FlowNetwork::removeOn(int link) {
  std::vector<std::pair<double, uint64_t>> out;
  while (!links_[static_cast<size_t>(link)].flows.empty()) {
    const int id = links_[static_cast<size_t>(link)].flows.back();
    settle(id);
    const Flow& f = flows_[static_cast<size_t>(id)];
    out.emplace_back(f.left, f.tag);
    detach(id);
  }
  return out;
}

void FlowNetwork::settle(int id) {
  Flow& f = flows_[static_cast<size_t>(id)];
  const double dt = now_ - f.since;
  if (dt <= 0) return;
  double moved = hot_[static_cast<size_t>(id)].rate * dt;
  if (f.left != kForever) moved = std::min(moved, f.left), f.left -= moved;
  for (int l : linksOf(f)) carried_[static_cast<size_t>(l)] += moved;
  f.since = now_;
}

void FlowNetwork::setRate(int id, double r) {
  FlowHot& h = hot_[static_cast<size_t>(id)];
  if (r == h.rate) return;
  settle(id);
  Flow& f = flows_[static_cast<size_t>(id)];
  f.since = now_, h.rate = r;
  if (r > 0 && f.left != kForever)
    due_.set(id, now_ + f.left / r);
  else
    due_.erase(id);
}

void FlowNetwork::detach(int id) {
  Flow& f = flows_[static_cast<size_t>(id)];
  for (size_t k = 0; k < f.hops; ++k) {
    LinkState& l = links_[static_cast<size_t>(f.links[k])];
    std::vector<int>& on = l.flows;
    const int moved = on.back(), at = f.slot[k];
    on[static_cast<size_t>(at)] = moved;
    Flow& m = flows_[static_cast<size_t>(moved)];
    for (size_t j = 0; j < m.hops; ++j)
      if (m.links[j] == f.links[k] && m.slot[j] == static_cast<int>(on.size()) - 1) {
        m.slot[j] = at;
        break;
      }
    on.pop_back();
    if (!l.dirty) l.dirty = true, dirty_.push_back(f.links[k]);
  }
  f.live = false, hot_[static_cast<size_t>(id)].rate = 0;
  due_.erase(id);
  --active_;
  free_.push_back(id);
}

double FlowNetwork::nextFinish() {
  rerate();
  return due_.empty() ? kForever : std::max(0.0, due_.topAt() - now_);
}

void FlowNetwork::advance(double dt, std::vector<uint64_t>* finished) {
  rerate();
  now_ += dt;
  while (!due_.empty()) {
    const int id = due_.topId();
    const Flow& f = flows_[static_cast<size_t>(id)];
    if (f.left - hot_[static_cast<size_t>(id)].rate * (now_ - f.since) >= kEpsilonBytes) break;
    due_.pop();
    settle(id);
    finished->push_back(f.tag);
    detach(id);
  }
}

double FlowNetwork::rate(int flow) {
  rerate();
  return hot_[static_cast<size_t>(flow)].rate;
}

const std::vector<double>& FlowNetwork::carried() {
  for (size_t id = 0; id < flows_.size(); ++id)
    if (flows_[id].live) settle(static_cast<int>(id));
  return carried_;
}

// A new epoch (one per recomputation) or filling round; when the counter wraps, the marks stamped with it
// are cleared so that no stale mark reads as current.
void FlowNetwork::nextEpoch() {
  if (++epoch_ != 0) return;
  for (LinkState& l : links_) l.in = 0;
  for (FlowHot& h : hot_) h.in = 0;
  epoch_ = 1;
}

void FlowNetwork::nextRound() {
  if (++round_ != 0) return;
  for (LinkState& l : links_) l.round = 0;
  round_ = 1;
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
  nextEpoch();
  region_.clear(), members_.clear();
  auto addLink = [&](int l) {
    LinkState& u = links_[static_cast<size_t>(l)];
    if (u.in != epoch_) u.in = epoch_, region_.push_back(l);
  };
  for (int l : dirty_) links_[static_cast<size_t>(l)].dirty = false, addLink(l);
  dirty_.clear();
  for (size_t scanned = 0;;) {
    for (; scanned < region_.size(); ++scanned)
      for (int id : links_[static_cast<size_t>(region_[scanned])].flows)
        if (FlowHot& h = hot_[static_cast<size_t>(id)]; h.in != epoch_) h.in = epoch_, members_.push_back(id);
    fill();
    ++stats_.rerateRounds;
    const size_t before = region_.size();
    for (int id : members_) {
      const FlowHot& h = hot_[static_cast<size_t>(id)];
      if (!moved(h.rate, h.next)) continue;
      for (int l : linksOf(flows_[static_cast<size_t>(id)])) addLink(l);
    }
    for (int id : members_) {
      const FlowHot& h = hot_[static_cast<size_t>(id)];
      if (h.frozeAt < 0) continue;
      const LinkState& t = links_[static_cast<size_t>(h.frozeAt)];
      if (t.in != epoch_ && t.outsideMax > h.next * (1 + kSameRate)) addLink(h.frozeAt);
    }
    if (region_.size() == before) break;
  }
  stats_.rerateFlows += members_.size(), stats_.rerateLinks += region_.size();
  for (int id : members_) {
    const FlowHot& h = hot_[static_cast<size_t>(id)];
    if (moved(h.rate, h.next)) setRate(id, h.next);
  }
}

// Progressive filling over the members (maxMinRates' rule): the link with the smallest fair share (what
// the outside flows leave of it / its unfrozen members; ties to the lower index) freezes its unfrozen
// members at that share. Over a few links a scan finds it; over more, a heap with lazily dropped stale
// entries (shares only grow as flows freeze). Writes next and frozeAt of every member, and the fastest
// outside flow of each link it covers.
void FlowNetwork::fill() {
  nextRound();
  sub_.clear();
  // What each unfrozen member of a link may still take (rounding may leave a full link a hair below zero).
  auto share = [](const LinkState& u) { return std::max(0.0, u.leftCap) / u.users; };
  for (int id : members_) {
    FlowHot& h = hot_[static_cast<size_t>(id)];
    h.frozeAt = -1, h.next = 0;
    for (int l : linksOf(flows_[static_cast<size_t>(id)])) {
      LinkState& u = links_[static_cast<size_t>(l)];
      if (u.round != round_) u.round = round_, sub_.push_back(l), u.users = 0, u.leftCap = u.capacity;
      ++u.users;
    }
  }
  for (int l : sub_) {
    LinkState& u = links_[static_cast<size_t>(l)];
    u.outsideMax = 0;
    if (u.in != epoch_)  // a link outside the region: its outside flows keep their rates
      for (int o : u.flows)
        if (const FlowHot& h = hot_[static_cast<size_t>(o)]; h.in != epoch_)
          u.leftCap -= h.rate, u.outsideMax = std::max(u.outsideMax, h.rate);
  }
  // Freezes the unfrozen members of link t at `at`; movedShare(u) hears of every other link whose share moved.
  auto freeze = [&](size_t t, double at, auto&& movedShare) {
    for (int id : links_[t].flows) {
      FlowHot& h = hot_[static_cast<size_t>(id)];
      if (h.in != epoch_ || h.frozeAt >= 0) continue;
      h.frozeAt = static_cast<int32_t>(t), h.next = at;
      for (int k : linksOf(flows_[static_cast<size_t>(id)])) {
        const auto u = static_cast<size_t>(k);
        links_[u].leftCap -= at, --links_[u].users;
        if (u != t && links_[u].users > 0) movedShare(u);
      }
    }
    links_[t].leftCap = 0, links_[t].users = 0;
  };
  // Few links (the usual region): the smallest share (ties to the lower link) by a scan of them all, each
  // time a link freezes.
  if (sub_.size() <= kScanLinks) {
    for (;;) {
      size_t t = SIZE_MAX;
      double least = 0;
      for (int l : sub_) {
        const auto u = static_cast<size_t>(l);
        if (links_[u].users <= 0) continue;
        const double sh = share(links_[u]);
        if (t == SIZE_MAX || sh < least || (sh == least && u < t)) t = u, least = sh;
      }
      if (t == SIZE_MAX) return;
      freeze(t, least, [](size_t) {});
    }
  }
  std::vector<Share>& heap = heap_;  // a min-heap on (share, link)
  heap.clear();
  for (int l : sub_) heap.push_back({share(links_[static_cast<size_t>(l)]), l});
  std::make_heap(heap.begin(), heap.end(), std::greater<>{});
  while (!heap.empty()) {
    std::pop_heap(heap.begin(), heap.end(), std::greater<>{});
    const Share s = heap.back();
    heap.pop_back();
    const auto t = static_cast<size_t>(s.link);
    if (links_[t].users <= 0 || share(links_[t]) != s.share) continue;  // stale
    freeze(t, s.share, [&](size_t u) {
      heap.push_back({share(links_[u]), static_cast<int>(u)}),
          std::push_heap(heap.begin(), heap.end(), std::greater<>{});
    });
  }
}

}  // namespace myriad::netsim
