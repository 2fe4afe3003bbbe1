// FlowNetwork: the flows active on a fabric's links, their max-min fair rates (recomputed whenever a flow
// starts or ends), and each link's carried bytes for the utilisation report. Time advances only when the
// caller says so; the network says when its next flow will finish.
#pragma once

#include <cstddef>
#include <cstdint>
#include <limits>
#include <vector>

namespace myriad::netsim {

class FlowNetwork {
 public:
  static constexpr double kForever = std::numeric_limits<double>::infinity();
  explicit FlowNetwork(std::vector<double> capacity);

  // Starts a flow of `bytes` (kForever: a background elephant that never ends) over `links`; returns its id.
  int start(std::vector<int> links, double bytes, uint64_t tag);
  // Seconds from now until the first active flow finishes (kForever when none will).
  double nextFinish() const;
  // Moves every flow on by dt seconds at its rate; appends the tags of the flows that finished.
  void advance(double dt, std::vector<uint64_t>* finished);
  double rate(int flow) const { return flows_[static_cast<size_t>(flow)].rate; }
  const std::vector<double>& carried() const { return carried_; }
  size_t active() const { return active_.size(); }

 private:
  struct Flow {
    std::vector<int> links;
    double left = 0, rate = 0;
    uint64_t tag = 0;
  };
  void rerate();
  std::vector<double> capacity_, carried_;
  std::vector<Flow> flows_;
  std::vector<int> active_;
  std::vector<int> free_;
};

}  // namespace myriad::netsim
