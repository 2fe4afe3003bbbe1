// The vocabulary that schedules are written in: a Group (the ranks a piece of a schedule runs among, in
// ring order, and this rank's place in it), Blocks (where each member's part of a buffer lies) and the
// slicing of a block into pipeline chunks. Invariant: every member computes the same Groups and Blocks from
// the call's arguments alone, so both ends of every message agree on its size without asking.
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
  // The ranks with this rank's local index, one per host ("rail"); needs every host to be that large.
  static Group rail(const CommView& comm);
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

// Ok when every host has the same number of ranks (hierarchical algorithms need it), else NotSupported
// saying how many each has.
Status evenHosts(const CommView& comm);

}  // namespace myriad
