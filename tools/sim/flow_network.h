// FlowNetwork: the flows active on a fabric's links, their max-min fair rates, and each link's carried
// bytes for the utilisation report. Time advances only when the caller says so; the network says when its
// next flow will finish.
//
// Incremental: each link keeps the list of its active flows; a start or an end marks the flow's links
// dirty, and before time next moves the rates are recomputed over a region grown from the dirty links only
// as far as rates move: the flows on the region's links share what the other flows (rates held) leave of
// every link they cross; a flow whose rate moved brings its links in, and so does a link where a flow froze
// below an outside flow; when nothing comes in, the result is the full max-min recomputation's (every flow
// then has a full link on which none runs faster). On a large fabric a change moves the rates of a few
// neighbours, not of the whole connected component that a full recomputation covers.
// A flow's bytes left are settled lazily (when its rate changes or it ends), and the next finish comes
// from a heap of projected finish times (FinishHeap), updated only for flows whose rate changed.
//
// Laid out for the filling, which at 10^5 ranks and more is a walk of cache misses: a link's state (its
// flows, capacity and the filling's scratch) is one cache line, and what the filling reads of a flow it
// meets (membership of the region, rate, result) is a small record apart from the flow's links and bytes.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <span>
#include <utility>
#include <vector>

#include "tools/sim/finish_heap.h"

namespace myriad::netsim {

class FlowNetwork {
 public:
  static constexpr double kForever = std::numeric_limits<double>::infinity();
  // The most links one flow crosses (a leaf-spine route crosses 4).
  static constexpr size_t kMaxLinks = 6;
  explicit FlowNetwork(std::vector<double> capacity);

  // Starts a flow of `bytes` (kForever: a background elephant that never ends) over `links` (at most
  // kMaxLinks, each crossed once); returns its id.
  int start(std::span<const int> links, double bytes, uint64_t tag);
  // Ends every flow that crosses `link` now (a failure) and returns each one's bytes left and tag.
  std::vector<std::pair<double, uint64_t>> removeOn(int link);
  // Seconds from now until the first active flow finishes (kForever when none will).
  double nextFinish();
  // Moves every flow on by dt seconds at its rate; appends the tags of the flows that finished.
  void advance(double dt, std::vector<uint64_t>* finished);
  // The flow's current rate (pending recomputations done first).
  double rate(int flow);
  // Bytes each link carried so far (every active flow settled first).
  const std::vector<double>& carried();
  size_t active() const { return active_; }
  // Counters for profiling: recomputations, the filling rounds their regions took, and the flows and links
  // the final regions held in all.
  struct Stats {
    uint64_t rerates = 0, rerateRounds = 0, rerateFlows = 0, rerateLinks = 0;
  };
  const Stats& stats() const { return stats_; }

 private:
  struct Flow {
    double left = 0;  // bytes left at time `since`
    double since = 0;
    uint64_t tag = 0;
    std::array<int, kMaxLinks> links{};
    std::array<int, kMaxLinks> slot{};  // slot[k]: the flow's index in links_[links[k]].flows
    uint8_t hops = 0;                   // links used
    bool live = false;
  };
  // What the filling reads of every flow on a link it covers: whether the flow is a member of the region
  // (in == epoch_), its rate, and the filling's result for a member (its rate next, the link it froze at).
  struct FlowHot {
    double rate = 0, next = 0;
    uint32_t in = 0;
    int32_t frozeAt = -1;
  };
  // A link: its flows, its capacity and the filling's scratch, in one cache line. In the region when
  // in == epoch_, covered by this filling round when round == round_: then leftCap is what its unfrozen
  // members may still share, users how many they are, outsideMax the fastest flow outside the region on it.
  struct alignas(64) LinkState {
    std::vector<int> flows;
    double capacity = 0, leftCap = 0, outsideMax = 0;
    uint32_t in = 0, round = 0;
    int32_t users = 0;
    bool dirty = false;
  };
  struct Share {  // a link's fair share in the filling's heap
    double share;
    int link;
    bool operator>(const Share& o) const { return share != o.share ? share > o.share : link > o.link; }
  };
  static std::span<const int> linksOf(const Flow& f) { return {f.links.data(), f.hops}; }
  void settle(int id);  // carries the bytes moved since the flow's `since` and moves it to now
  void setRate(int id, double r);
  void detach(int id);
  void rerate();
  void fill();
  void nextEpoch();
  void nextRound();
  std::vector<LinkState> links_;
  std::vector<double> carried_;
  std::vector<Flow> flows_;
  std::vector<FlowHot> hot_;
  std::vector<int> free_, dirty_;
  FinishHeap due_;
  double now_ = 0;
  size_t active_ = 0;
  Stats stats_;
  // Scratch for rerate, kept to avoid allocating per event: the region's links, its member flows, the links
  // the members cross (sub_), the heap of a large filling. The counters wrap (a long run makes billions of
  // fillings): the marks they stamp are cleared when they do.
  std::vector<int> region_, members_, sub_;
  std::vector<Share> heap_;
  uint32_t epoch_ = 0, round_ = 0;
};

}  // namespace myriad::netsim
