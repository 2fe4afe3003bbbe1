// The vocabulary that schedules are written in: a Group (the ranks a piece of a schedule runs among, in
// ring order, and this rank's place in it), Blocks (where each member's part of a buffer lies), the
// slicing of a block into pipeline chunks, and HostLanes (lanes and rails over hosts of any sizes).
// Invariant: every member computes the same Groups and Blocks from the call's arguments alone, so both
// ends of every message agree on its size without asking.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "plan/comm_view.h"
#include "plan/schedule.h"

namespace myriad {

struct Group {
  std::vector<int> ranks;  // communicator ranks, in ring order
  int me = 0;              // this rank's index in `ranks`

  int size() const { return static_cast<int>(ranks.size()); }
  int mod(int i) const { return ((i % size()) + size()) % size(); }
  // The communicator rank of member i (any integer, taken modulo the size).
  int at(int i) const { return ranks[static_cast<size_t>(mod(i))]; }

  // Every rank of the communicator, in rank order.
  static Group all(const CommView& comm);
  // The ranks on this rank's host (comm.hosts() order).
  static Group local(const CommView& comm);
};

// Member i's part of a buffer: `count[i]` elements starting at element `offset[i]`.
struct Blocks {
  std::vector<size_t> offset, count;

  size_t size() const { return count.size(); }
  size_t maxCount() const { return count.empty() ? 0 : *std::max_element(count.begin(), count.end()); }
  // `total` elements cut into n consecutive parts whose sizes differ by at most one (the first ones larger).
  static Blocks even(size_t total, int n);
  // n consecutive parts of `each` elements.
  static Blocks uniform(size_t each, int n);
  // Member i's part is communicator rank ranks[i]'s block of a buffer of per-rank blocks of `each` elements.
  static Blocks ofRanks(const std::vector<int>& ranks, size_t each);
};

// The k-th pipeline slice of a block of `count` elements cut into slices of `chunk` elements.
struct Slice {
  size_t begin = 0, count = 0;  // elements, relative to the block
};
inline Slice sliceOf(size_t count, size_t chunk, size_t k) {
  size_t b = std::min(count, k * chunk);
  return {b, std::min(count, b + chunk) - b};
}
inline size_t slicesOf(size_t count, size_t chunk) {
  return (count + chunk - 1) / chunk;
}
// Elements per pipeline slice for this communicator and element size (at least one).
inline size_t chunkElems(const CommView& comm, size_t elemSize) {
  return std::max<size_t>(1, comm.chunkBytes / elemSize);
}

// Element `elems` of a buffer of elements of `elemSize` bytes.
inline BufRef at(BufRef b, size_t elems, size_t elemSize) {
  return b + elems * elemSize;
}

// Lanes and rails: how the hierarchical algorithms split work between the ranks of hosts of any sizes.
// With Lmax the largest host's number of ranks there are Lmax lanes; on host h (L_h ranks) lane j is served
// by local rank j mod L_h, so a rank on a smaller host serves several lanes (local index l serves lanes l,
// l + L_h, l + 2 L_h, ...). Rail j is the ranks serving lane j, one per host in host order. On even hosts
// lane j is local rank j and rail j is the ranks with local index j. Two ranks may share several rails (a
// 1-rank host is on all of them), so a schedule adds its per-lane steps in one order (by lane) on every rank.
class HostLanes {
 public:
  explicit HostLanes(const CommView& comm);

  int lanes() const { return lanes_; }  // Lmax
  int hosts() const { return static_cast<int>(hosts_.size()); }
  // This rank's host; host h's number of ranks (L_h).
  int host() const { return host_; }
  int size(int h) const { return static_cast<int>(hosts_[static_cast<size_t>(h)].size()); }
  // The communicator rank serving `lane` on host h.
  int server(int h, int lane) const { return hosts_[static_cast<size_t>(h)][static_cast<size_t>(lane % size(h))]; }
  // Rail `lane`: member h is server(h, lane); this rank is member host().
  Group rail(int lane) const;
  // The lanes below `below` (default: all) that this rank serves, ascending.
  std::vector<int> served(int below = -1) const;

  // Wraps over this host: in wrap w, member i of Group::local serves lane w * L + i (L: this host's size).
  // The wraps needed to cover `nlanes` lanes: ceil(nlanes / L).
  int wraps(size_t nlanes) const;
  // Blocks for Group::local in wrap w: member i gets perLane's block of lane w * L + i, or an empty block
  // when that lane is past perLane's end.
  Blocks wrap(const Blocks& perLane, int w) const;
  // The lane this rank serves in wrap w.
  int laneIn(int w) const { return w * size(host_) + local_; }

 private:
  const std::vector<std::vector<int>>& hosts_;
  int lanes_ = 0, host_ = 0, local_ = 0;
};

}  // namespace myriad
