// Ring search: a ring is scored by its hops' paths (see search.h for the order of criteria, then the sum
// of path ranks and of bandwidth as tie-breaks). Small boxes are searched exhaustively with GPU 0 first;
// larger ones (DGX-2: 16 GPUs) from every start by nearest neighbour, then improved by 2-opt reversals.
#include "topology/search.h"

#include <algorithm>
#include <numeric>
#include <tuple>

namespace myriad {
namespace {

using Matrix = std::vector<std::vector<Path>>;

struct Score {
  int worst = 0;
  double bottleneck = 0;
  int sys = 0;
  int rankSum = 0;
  double gbpsSum = 0;
  // True when this ring is strictly better than `o`.
  bool better(const Score& o) const {
    return std::make_tuple(-worst, bottleneck, -sys, -rankSum, gbpsSum) >
           std::make_tuple(-o.worst, o.bottleneck, -o.sys, -o.rankSum, o.gbpsSum);
  }
};

Score score(const Matrix& m, const std::vector<int>& ring) {
  Score s;
  if (ring.size() < 2) return s;
  s.bottleneck = -1;
  for (size_t i = 0; i < ring.size(); ++i) {
    const Path& p = m[ring[i]][ring[(i + 1) % ring.size()]];
    s.worst = std::max(s.worst, static_cast<int>(p.type));
    s.bottleneck = s.bottleneck < 0 ? p.gbps : std::min(s.bottleneck, p.gbps);
    s.sys += p.type == PathType::kSys;
    s.rankSum += static_cast<int>(p.type);
    s.gbpsSum += p.gbps;
  }
  return s;
}

// Whether hop x is worse than hop y (for nearest neighbour and for opening a ring into a chain).
bool worseHop(const Path& x, const Path& y) {
  return x.type != y.type ? x.type > y.type : x.gbps < y.gbps;
}

std::vector<int> exhaustive(const Matrix& m) {
  std::vector<int> ring(m.size());
  std::iota(ring.begin(), ring.end(), 0);
  std::vector<int> best = ring;
  Score bestScore = score(m, ring);
  while (std::next_permutation(ring.begin() + 1, ring.end())) {
    Score s = score(m, ring);
    if (s.better(bestScore)) {
      bestScore = s;
      best = ring;
    }
  }
  return best;
}

std::vector<int> nearestNeighbour(const Matrix& m, int start) {
  std::vector<int> ring{start};
  std::vector<bool> used(m.size(), false);
  used[start] = true;
  while (ring.size() < m.size()) {
    int next = -1;
    for (int j = 0; j < static_cast<int>(m.size()); ++j) {
      if (!used[j] && (next < 0 || worseHop(m[ring.back()][next], m[ring.back()][j]))) next = j;
    }
    used[next] = true;
    ring.push_back(next);
  }
  return ring;
}

void twoOpt(const Matrix& m, std::vector<int>& ring) {
  Score current = score(m, ring);
  for (bool improved = true; improved;) {
    improved = false;
    for (size_t i = 1; i + 1 < ring.size(); ++i) {
      for (size_t j = i + 1; j < ring.size(); ++j) {
        std::reverse(ring.begin() + i, ring.begin() + j + 1);
        Score s = score(m, ring);
        if (s.better(current)) {
          current = s;
          improved = true;
        } else {
          std::reverse(ring.begin() + i, ring.begin() + j + 1);
        }
      }
    }
  }
}

std::vector<int> heuristic(const Matrix& m) {
  std::vector<int> best;
  Score bestScore;
  for (int start = 0; start < static_cast<int>(m.size()); ++start) {
    std::vector<int> ring = nearestNeighbour(m, start);
    twoOpt(m, ring);
    std::rotate(ring.begin(), std::find(ring.begin(), ring.end(), 0), ring.end());
    Score s = score(m, ring);
    if (best.empty() || s.better(bestScore)) {
      best = ring;
      bestScore = s;
    }
  }
  return best;
}

Matrix gpuMatrix(const Topology& topo) {
  std::vector<int> gpus = orderedGpus(topo);
  Matrix m(gpus.size(), std::vector<Path>(gpus.size()));
  for (size_t i = 0; i < gpus.size(); ++i) {
    for (size_t j = 0; j < gpus.size(); ++j) m[i][j] = pathBetween(topo, gpus[i], gpus[j]);
  }
  return m;
}

}  // namespace

RingOrder searchRing(const Topology& topo) {
  Matrix m = gpuMatrix(topo);
  RingOrder r;
  if (m.empty()) return r;
  r.gpus = m.size() <= 9 ? exhaustive(m) : heuristic(m);
  Score s = score(m, r.gpus);
  r.worst = static_cast<PathType>(s.worst);
  r.bottleneckGbps = std::max(0.0, s.bottleneck);
  r.sysCrossings = s.sys;
  return r;
}

std::vector<int> searchChain(const Topology& topo) {
  Matrix m = gpuMatrix(topo);
  std::vector<int> ring = searchRing(topo).gpus;
  if (ring.size() < 3) return ring;
  size_t weakest = 0;  // the hop from ring[weakest] to the next
  for (size_t i = 1; i < ring.size(); ++i) {
    if (worseHop(m[ring[i]][ring[(i + 1) % ring.size()]], m[ring[weakest]][ring[(weakest + 1) % ring.size()]]))
      weakest = i;
  }
  std::rotate(ring.begin(), ring.begin() + static_cast<long>((weakest + 1) % ring.size()), ring.end());
  return ring;
}

}  // namespace myriad
