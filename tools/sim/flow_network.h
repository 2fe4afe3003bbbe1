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
// from a priority queue keyed by projected finish time, updated only for flows whose rate changed.
#pragma once

#include <cstddef>
#include <cstdint>
#include <limits>
#include <queue>
#include <utility>
#include <vector>

namespace myriad::netsim {

class FlowNetwork {
 public:
  static constexpr double kForever = std::numeric_limits<double>::infinity();
  explicit FlowNetwork(std::vector<double> capacity);

  // Starts a flow of `bytes` (kForever: a background elephant that never ends) over `links`; returns its id.
  int start(std::vector<int> links, double bytes, uint64_t tag);
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
    std::vector<int> links;
    std::vector<int> slot;  // slot[k]: the flow's index in linkFlows_[links[k]]
    double left = 0;        // bytes left at time `since`
    double since = 0, rate = 0;
    uint64_t tag = 0;
    uint32_t version = 0;  // bumped whenever the finish time changes: older heap entries are stale
    bool live = false;
  };
  struct Due {
    double at;
    int id;
    uint32_t version;
    bool operator>(const Due& o) const { return at != o.at ? at > o.at : id > o.id; }
  };
  struct Share {  // a link's fair share in the filling's heap
    double share;
    int link;
    bool operator>(const Share& o) const { return share != o.share ? share > o.share : link > o.link; }
  };
  void settle(Flow& f);  // carries the bytes moved since f.since and moves f.since to now
  void setRate(int id, double r);
  void detach(int id);
  void rerate();
  void fill();
  std::vector<double> capacity_, carried_;
  std::vector<std::vector<int>> linkFlows_;
  std::vector<Flow> flows_;
  std::vector<int> free_, dirty_;
  std::vector<char> linkDirty_;
  std::priority_queue<Due, std::vector<Due>, std::greater<>> due_;
  double now_ = 0;
  size_t active_ = 0;
  Stats stats_;
  // Scratch for rerate, kept to avoid allocating per event. Per link: in the region (linkIn_ == epoch_),
  // crossed by a member this filling round (linkRound_ == round_); per flow: a member (flowIn_ == epoch_),
  // its rate from the filling (next_) and the link it froze at (frozeAt_, -1 before); per link crossed by a
  // member, the rate of its fastest flow outside the region (outsideMax_).
  std::vector<int> region_, members_, sub_, users_, frozeAt_;
  std::vector<double> leftCap_, outsideMax_, next_;
  std::vector<Share> heap_;
  std::vector<uint64_t> linkIn_, linkRound_, flowIn_;  // 64-bit: a long run makes billions of fillings
  uint64_t epoch_ = 0, round_ = 0;
};

}  // namespace myriad::netsim
