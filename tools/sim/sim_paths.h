// SimPaths: the paths of one connection (a rank pair, one direction) in the simulator. Their source ports are
// the ones the library's multipath PathSet chooses (P active paths, the default port range, a seed per pair
// derived from the simulation seed: the library seeds each connection from its options, and this stands for
// that). How a message is spread over them:
// - static: an even split (the transport's static split, MYRIAD_NET_ADAPTIVE=0);
// - adaptive: in proportion to each path's last measured rate (the transport's lanes pull chunks as they
//   drain, so a faster path carries more), and the library's own PathKeeper and ControlLoop judge the paths:
//   each part gives a service sample (its flow's time per 64 KiB chunk, in virtual time), a round closes
//   every 8 samples per path as in the transport, and a slot the loop names slow has its position moved to
//   a fresh port, used from the next message on.
// Simplified against the transport: the fresh port is used at once (no spare opened ahead and scouted, no
// connection set-up), and a message's parts all start together (no chunk-by-chunk pulling within it).
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

namespace myriad::mp {
class PathKeeper;
}

namespace myriad::netsim {

enum class PathPolicy : uint8_t { kStatic, kAdaptive };

class SimPaths {
 public:
  SimPaths(uint64_t seed, int src, int dst, int paths, PathPolicy policy, double now);
  ~SimPaths();
  SimPaths(SimPaths&&) noexcept;
  SimPaths& operator=(SimPaths&&) noexcept;

  int size() const { return static_cast<int>(ports_.size()); }
  uint16_t port(int position) const { return ports_[static_cast<size_t>(position)]; }
  // The bytes of the next message on each path (the pair has one message on the wire at a time; part()
  // then says what each path carries).
  void split(double bytes);
  double part(int position) const { return parts_[static_cast<size_t>(position)]; }
  // The part on `position` finished after `seconds`, at `now`. Adaptive: its rate is noted and the control
  // loop gets a sample, which may close a round and move a slow path: true when a port changed.
  bool served(int position, double seconds, double now);
  uint64_t repaths() const { return repaths_; }

 private:
  std::vector<uint16_t> ports_;
  std::vector<double> parts_;               // the message on the wire: bytes per position
  std::vector<double> rates_;               // adaptive: last measured bytes/s per position, 0 unknown
  std::vector<int> slots_;                  // adaptive: the keeper's slot at each position
  std::unique_ptr<mp::PathKeeper> keeper_;  // adaptive only
  uint64_t repaths_ = 0;
};

}  // namespace myriad::netsim
