// Groups of ranks, block layouts and host lanes, computed from the communicator's host table alone.
#include "algorithms/layout.h"

namespace myriad {

Group Group::all(const CommView& comm) {
  Group g;
  for (int r = 0; r < comm.nranks(); ++r) g.ranks.push_back(r);
  g.me = comm.rank;
  return g;
}

Group Group::local(const CommView& comm) {
  Group g;
  g.ranks = comm.hosts()[static_cast<size_t>(comm.hostOf(comm.rank))];
  g.me = comm.localIndex(comm.rank);
  return g;
}

Blocks Blocks::even(size_t total, int n) {
  Blocks b;
  size_t parts = static_cast<size_t>(n), base = total / parts, rem = total % parts;
  size_t at = 0;
  for (size_t i = 0; i < parts; ++i) {
    size_t c = base + (i < rem ? 1 : 0);
    b.offset.push_back(at);
    b.count.push_back(c);
    at += c;
  }
  return b;
}

Blocks Blocks::uniform(size_t each, int n) {
  Blocks b;
  for (size_t i = 0; i < static_cast<size_t>(n); ++i) {
    b.offset.push_back(i * each);
    b.count.push_back(each);
  }
  return b;
}

Blocks Blocks::ofRanks(const std::vector<int>& ranks, size_t each) {
  Blocks b;
  for (int r : ranks) {
    b.offset.push_back(static_cast<size_t>(r) * each);
    b.count.push_back(each);
  }
  return b;
}

HostLanes::HostLanes(const CommView& comm)
    : hosts_(comm.hosts()), host_(comm.hostOf(comm.rank)), local_(comm.localIndex(comm.rank)) {
  for (const auto& h : hosts_) lanes_ = std::max(lanes_, static_cast<int>(h.size()));
}

Group HostLanes::rail(int lane) const {
  Group g;
  for (int h = 0; h < hosts(); ++h) g.ranks.push_back(server(h, lane));
  g.me = host_;
  return g;
}

std::vector<int> HostLanes::served(int below) const {
  std::vector<int> out;
  int end = below < 0 ? lanes_ : std::min(below, lanes_);
  for (int j = local_; j < end; j += size(host_)) out.push_back(j);
  return out;
}

int HostLanes::wraps(size_t nlanes) const {
  size_t l = static_cast<size_t>(size(host_));
  return static_cast<int>((nlanes + l - 1) / l);
}

Blocks HostLanes::wrap(const Blocks& perLane, int w) const {
  Blocks b;
  for (int i = 0; i < size(host_); ++i) {
    size_t lane = static_cast<size_t>(w * size(host_) + i);
    b.offset.push_back(lane < perLane.size() ? perLane.offset[lane] : 0);
    b.count.push_back(lane < perLane.size() ? perLane.count[lane] : 0);
  }
  return b;
}

}  // namespace myriad
