// Groups of ranks and block layouts, computed from the communicator's host table alone.
#include "algorithms/layout.h"

#include <string>

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

Group Group::rail(const CommView& comm) {
  Group g;
  size_t l = static_cast<size_t>(comm.localIndex(comm.rank));
  for (const auto& host : comm.hosts()) {
    MYR_ASSERT(l < host.size());
    g.ranks.push_back(host[l]);
  }
  g.me = comm.hostOf(comm.rank);
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

Status evenHosts(const CommView& comm) {
  bool even = true;
  std::string sizes;
  for (const auto& h : comm.hosts()) {
    even = even && h.size() == comm.hosts().front().size();
    sizes += (sizes.empty() ? "" : ", ") + std::to_string(h.size());
  }
  if (even) return Status::ok();
  return notSupported("hosts have different numbers of ranks (" + sizes + ")");
}

}  // namespace myriad
