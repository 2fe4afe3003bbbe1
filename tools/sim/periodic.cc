// Periodic regions: each step gets a signature (kind, slot, size, dependencies, distances to its dependents);
// for each period p, a run of steps whose signature equals the one p steps on is a region of period p.
// Signatures are compared by hash to find candidates and field by field before a region is kept.
#include "tools/sim/periodic.h"

#include <algorithm>

#include "tools/sim/ecmp.h"

namespace myriad::netsim {
namespace {

// A dependency is far when it leaves a step that many wait for or enters one that waits for many: the join
// that ends a piece (it waits for every step of the piece) or the step a whole piece starts after. Such a
// dependency is no part of the repeating pattern; it is compared by the step it reaches, not by distance.
bool far(const PlanShape& s, size_t i, size_t j) {
  return s.afterAt[i + 1] - s.afterAt[i] > kFarFanOut || s.numDeps[j] > kFarFanOut;
}

// The k-th dependent of step i as the pattern sees it: its distance, or its index with the top bit set.
uint64_t edgeKey(const PlanShape& s, size_t i, uint32_t k, size_t beyond) {
  const size_t j = static_cast<size_t>(s.after[k]);
  return comparedByStep(s, i, j, beyond) ? (uint64_t{1} << 63) | j : j - i;
}

uint64_t signature(const PlanShape& s, size_t i, size_t beyond) {
  uint64_t h = mix64(static_cast<uint64_t>(s.kind[i]) + s.slot[i]);
  h = mix64(h + s.bytes[i]), h = mix64(h + s.numDeps[i]);
  for (uint32_t k = s.afterAt[i]; k < s.afterAt[i + 1]; ++k) h = mix64(h + edgeKey(s, i, k, beyond));
  return h;
}

// The longest dependency compared by distance that starts or ends in [start, end).
size_t spanOf(const PlanShape& s, size_t start, size_t end, size_t beyond) {
  size_t span = 0;
  for (size_t i = 0; i < end; ++i)
    for (uint32_t k = s.afterAt[i]; k < s.afterAt[i + 1]; ++k) {
      const size_t j = static_cast<size_t>(s.after[k]);
      if ((i >= start || j >= start) && !comparedByStep(s, i, j, beyond)) span = std::max(span, j - i);
    }
  return span;
}

// Every step's signature, far dependencies longer than `beyond` compared by the step they reach.
std::vector<uint64_t> signatures(const PlanShape& shape, size_t beyond) {
  std::vector<uint64_t> sig(shape.size());
  for (size_t i = 0; i < sig.size(); ++i) sig[i] = signature(shape, i, beyond);
  return sig;
}

// Appends the runs of period p (signatures `sig`, made with `beyond`) of at least minBlocks blocks and
// minSteps steps.
void findRuns(const PlanShape& shape, const std::vector<uint64_t>& sig, uint32_t p, size_t beyond, uint64_t minBlocks,
              uint64_t minSteps, std::vector<PeriodicRegion>* found) {
  const size_t m = shape.size();
  size_t a = 0;
  while (a + p < m) {
    if (sig[a] != sig[a + p]) {
      ++a;
      continue;
    }
    size_t b = a;  // [a, b): every step alike the one p on
    while (b + p < m && sig[b] == sig[b + p] && stepsAlike(shape, b, b + p, beyond)) ++b;
    const uint64_t blocks = (b - a + p) / p;
    if (b > a && blocks >= minBlocks && blocks * p >= minSteps)
      found->push_back(PeriodicRegion{a, p, blocks, 0, beyond});
    a = std::max(b, a + 1);
  }
}

}  // namespace

bool comparedByStep(const PlanShape& s, size_t i, size_t j, size_t beyond) {
  return j - i > beyond && far(s, i, j);
}

bool stepsAlike(const PlanShape& s, size_t i, size_t j, size_t beyond) {
  if (s.kind[i] != s.kind[j] || s.slot[i] != s.slot[j] || s.bytes[i] != s.bytes[j] || s.numDeps[i] != s.numDeps[j])
    return false;
  const uint32_t ni = s.afterAt[i + 1] - s.afterAt[i];
  if (ni != s.afterAt[j + 1] - s.afterAt[j]) return false;
  for (uint32_t k = 0; k < ni; ++k)
    if (edgeKey(s, i, s.afterAt[i] + k, beyond) != edgeKey(s, j, s.afterAt[j] + k, beyond)) return false;
  return true;
}

std::vector<PeriodicRegion> periodicRegions(const PlanShape& shape, uint64_t minSteps, uint32_t maxPeriod) {
  const size_t m = shape.size();
  std::vector<PeriodicRegion> found;
  // Short periods (a ring's units, a tree's slices): every far dependency compared by the step it reaches.
  const std::vector<uint64_t> shortSig = signatures(shape, 0);
  for (uint32_t p = 1; p <= maxPeriod && 2 * static_cast<size_t>(p) <= m; ++p)
    findRuns(shape, shortSig, p, 0, 8, minSteps, &found);
  // Long periods: pieces that run in passes, each closed by a join; a period is a distance between
  // consecutive joins that recurs, and a pass's own joins are part of its pattern.
  std::vector<size_t> joins;
  for (size_t i = 0; i < m; ++i)
    if (shape.numDeps[i] > kFarFanOut) joins.push_back(i);
  std::vector<std::pair<size_t, int>> gaps;  // distance, times seen
  for (size_t k = 1; k < joins.size(); ++k) {
    const size_t d = joins[k] - joins[k - 1];
    auto it = std::find_if(gaps.begin(), gaps.end(), [d](const auto& g) { return g.first == d; });
    if (it == gaps.end())
      gaps.emplace_back(d, 1);
    else
      ++it->second;
  }
  for (const auto& [d, seen] : gaps)
    if (d > maxPeriod && seen >= 4 && gaps.size() <= 16)
      findRuns(shape, signatures(shape, d), static_cast<uint32_t>(d), d, 4, minSteps, &found);
  std::sort(found.begin(), found.end(), [](const PeriodicRegion& x, const PeriodicRegion& y) {
    const uint64_t cx = x.blocks * x.period, cy = y.blocks * y.period;
    return cx != cy ? cx > cy : x.period < y.period;
  });
  std::vector<PeriodicRegion> kept;
  for (const PeriodicRegion& r : found) {
    const bool overlaps = std::any_of(kept.begin(), kept.end(),
                                      [&](const PeriodicRegion& k) { return r.start < k.end() && k.start < r.end(); });
    if (!overlaps) kept.push_back(r);
  }
  std::sort(kept.begin(), kept.end(),
            [](const PeriodicRegion& x, const PeriodicRegion& y) { return x.start < y.start; });
  for (PeriodicRegion& r : kept) r.span = spanOf(shape, r.start, r.end(), r.farBeyond);
  return kept;
}

PlanShape cutShape(const PlanShape& shape, const std::vector<BlockCut>& cuts) {
  const size_t m = shape.size();
  // Removed step ranges [from, to) in step order, and the compressed index of every step.
  struct Range {
    size_t from, to, beyond;
  };
  std::vector<Range> removed;
  for (const BlockCut& c : cuts)
    if (c.blocks > 0) removed.push_back(Range{c.from(), c.to(), c.region.farBeyond});
  std::vector<int64_t> index(m, -1);
  std::vector<size_t> shiftOf(m, 0);   // a removed step: the length of its cut (its counterpart is that far on)
  std::vector<size_t> beyondOf(m, 0);  // a removed step: its region's farBeyond
  {
    size_t next = 0, r = 0;
    for (size_t i = 0; i < m; ++i) {
      while (r < removed.size() && i >= removed[r].to) ++r;
      if (r < removed.size() && i >= removed[r].from) {
        shiftOf[i] = removed[r].to - removed[r].from, beyondOf[i] = removed[r].beyond;
        continue;
      }
      index[i] = static_cast<int64_t>(next++);
    }
  }
  PlanShape out;
  out.afterAt.push_back(0);
  for (size_t i = 0; i < m; ++i) {
    if (index[i] < 0) continue;
    out.kind.push_back(shape.kind[i]), out.slot.push_back(shape.slot[i]), out.bytes.push_back(shape.bytes[i]);
    for (uint32_t k = shape.afterAt[i]; k < shape.afterAt[i + 1]; ++k) {
      size_t j = static_cast<size_t>(shape.after[k]);
      bool dropped = false;
      while (index[j] < 0 && !dropped) {  // past cuts in cuts (a grid's columns beyond a cut of passes)
        dropped = comparedByStep(shape, i, j, beyondOf[j]);  // its counterpart past the cut has its own
        j += shiftOf[j];                                     // into a cut: its counterpart past the cut
      }
      if (!dropped) out.after.push_back(static_cast<int32_t>(index[j]));
    }
    out.afterAt.push_back(static_cast<uint32_t>(out.after.size()));
  }
  out.finish();
  return out;
}

OrdinalRange removedMessages(const PlanShape& shape, const BlockCut& cut, uint32_t slot, bool sends) {
  const auto& list = sends ? shape.sendsTo[slot] : shape.recvsFrom[slot];
  auto first = std::lower_bound(list.begin(), list.end(), static_cast<int32_t>(cut.from()));
  auto last = std::lower_bound(list.begin(), list.end(), static_cast<int32_t>(cut.to()));
  return OrdinalRange{static_cast<uint32_t>(first - list.begin()), static_cast<uint32_t>(last - list.begin())};
}

}  // namespace myriad::netsim
