// Grids of ring rounds and their column cuts (see grid.h).
#include "tools/sim/grid.h"

#include <algorithm>

namespace myriad::netsim {
namespace {

constexpr uint32_t kMaxPeriod = 64;  // a slice's steps: the short periods periodicRegions tries
constexpr uint64_t kMinColumns = 8;

bool isJoin(const PlanShape& s, size_t i) {
  return s.numDeps[i] > kFarFanOut;
}

// Whether [x, x + len) is one row: no join in it, and every step alike the one `period` on within it (far
// dependencies compared by the step they reach, as a short period compares them).
bool rowAt(const PlanShape& s, size_t x, size_t len, uint32_t period) {
  if (x + len > s.size()) return false;
  for (size_t i = x; i < x + len; ++i)
    if (isJoin(s, i) || (i + period < x + len && !stepsAlike(s, i, i + period, 0))) return false;
  return true;
}

// The smallest period (up to kMaxPeriod) along which the seed's first steps repeat, or 0.
uint32_t periodAt(const PlanShape& s, size_t x) {
  for (uint32_t p = 1; p <= kMaxPeriod; ++p) {
    bool ok = x + 4 * p <= s.size();
    for (size_t i = x; ok && i < x + 3 * p; ++i) ok = stepsAlike(s, i, i + p, 0);
    if (ok) return p;
  }
  return 0;
}

// The rows of length `len` around the row at x: back and on while each is a row; across joins (skipped)
// only where they lie in `passes` (a region whose period is a pass: the rounds of one pass, its join, the
// next pass's rounds), never across the join that ends the phase.
std::vector<size_t> rowsAround(const PlanShape& s, size_t x, size_t len, uint32_t period,
                               const PeriodicRegion* passes) {
  auto crossable = [&](size_t join) { return passes && join >= passes->start && join < passes->end(); };
  std::vector<size_t> back, on;
  for (size_t at = x;;) {  // back
    size_t y = at;
    while (y > 0 && isJoin(s, y - 1)) --y;
    if (y < len || (y != at && !crossable(y)) || !rowAt(s, y - len, len, period)) break;
    back.push_back(at = y - len);
  }
  for (size_t at = x;;) {  // on
    if (!rowAt(s, at, len, period)) break;
    on.push_back(at);
    size_t y = at + len;
    while (y < s.size() && isJoin(s, y)) ++y;
    if (y != at + len && !crossable(at + len)) break;
    at = y;
  }
  std::reverse(back.begin(), back.end());
  back.insert(back.end(), on.begin(), on.end());
  return back;
}

// The grid of `rows` (row length columns * period) if every dependency compared by distance that starts or
// ends in a row stays in the rows, goes a row on at most and 0 to columns / 8 columns on.
std::optional<Grid> check(const PlanShape& s, std::vector<size_t> rows, uint32_t period, uint64_t columns) {
  const size_t len = columns * period;
  Grid g{std::move(rows), period, columns, 1};
  auto rowOf = [&](size_t i) -> std::optional<size_t> {
    auto it = std::upper_bound(g.rows.begin(), g.rows.end(), i);
    if (it == g.rows.begin() || i >= *std::prev(it) + len) return std::nullopt;
    return static_cast<size_t>(it - g.rows.begin() - 1);
  };
  for (size_t x = 0; x < g.end(); ++x) {
    const std::optional<size_t> rx = rowOf(x);
    for (uint32_t k = s.afterAt[x]; k < s.afterAt[x + 1]; ++k) {
      const size_t j = static_cast<size_t>(s.after[k]);
      if (comparedByStep(s, x, j, 0)) continue;
      const std::optional<size_t> rj = rowOf(j);
      if (!rx && !rj) continue;
      if (!rx || !rj || *rj > *rx + 1) return std::nullopt;
      const uint64_t cx = (x - g.rows[*rx]) / period, cj = (j - g.rows[*rj]) / period;
      if (cj < cx || cj - cx > columns / 8) return std::nullopt;
      g.reach = std::max(g.reach, cj - cx);
    }
  }
  return g;
}

}  // namespace

PeriodicRegion Grid::asRegion() const {
  return PeriodicRegion{start(), period, (end() - start()) / period, reach * period, 0};
}

std::optional<Grid> gridAround(const PlanShape& s, const PeriodicRegion& seed) {
  const size_t x = seed.start;
  const uint32_t period = periodAt(s, x);
  if (period == 0) return std::nullopt;
  // Distances of the dependencies by distance out of the seed's first steps: the rows' length is near the
  // shortest of those at least half the longest (a slice waits for its column, or one on, a row back).
  size_t longest = 0, shortest = SIZE_MAX;
  const size_t probe = std::min(seed.end(), x + 4 * static_cast<size_t>(seed.period));
  for (int pass = 0; pass < 2; ++pass)
    for (size_t i = x; i < probe; ++i)
      for (uint32_t k = s.afterAt[i]; k < s.afterAt[i + 1]; ++k) {
        const size_t j = static_cast<size_t>(s.after[k]);
        if (comparedByStep(s, i, j, 0)) continue;
        if (pass == 0) longest = std::max(longest, j - i);
        if (pass == 1 && 2 * (j - i) >= longest) shortest = std::min(shortest, j - i);
      }
  if (shortest == SIZE_MAX) return std::nullopt;
  const PeriodicRegion* passes = seed.period > kMaxPeriod ? &seed : nullptr;
  // A dependency a row on lands a few steps either side of the same column: both lengths are tried, and the
  // grid that covers more is kept.
  std::optional<Grid> best;
  for (const size_t columns : {shortest / period, shortest / period + 1}) {
    if (columns < kMinColumns) continue;
    std::vector<size_t> rows = rowsAround(s, x, columns * period, period, passes);
    if (rows.size() < 2) continue;
    std::optional<Grid> g = check(s, std::move(rows), period, columns);
    if (g && passes && g->rows.size() > passes->period / (columns * period)) g->passes = *passes;
    if (g && (!best || g->end() - g->start() > best->end() - best->start())) best = std::move(g);
  }
  return best;
}

std::vector<BlockCut> columnCuts(const Grid& grid, uint64_t removed, uint64_t keepBack, uint32_t shift) {
  std::vector<BlockCut> cuts;
  for (size_t row : grid.rows) {
    const PeriodicRegion one{row, grid.period, grid.columns, grid.reach * grid.period, 0};
    cuts.push_back(BlockCut{one, removed, keepBack, shift});
  }
  return cuts;
}

uint64_t blocksOf(uint64_t steps, uint64_t period, bool grid) {
  return std::max<uint64_t>(grid ? 1 : 2, (steps + period - 1) / period);
}
uint64_t blockSteps(const PeriodicRegion& r, const Grid& g) {
  return g.columns > 0 ? g.period * g.rows.size() : r.period;
}

std::vector<PeriodicRegion> withGrids(const PlanShape& shape, const std::vector<PeriodicRegion>& regions,
                                      uint64_t baseSteps, uint64_t stepSteps, std::vector<Grid>* grids) {
  // Candidates: each region's grid where it cuts better; the widest first, none over another.
  std::vector<Grid> chosen;
  for (const PeriodicRegion& r : regions) {
    std::optional<Grid> g = gridAround(shape, r);
    if (!g) continue;
    const uint64_t b = blocksOf(baseSteps, r.period), d = blocksOf(stepSteps, r.period);
    const uint64_t gb = blocksOf(baseSteps, blockSteps(r, *g), true);
    const uint64_t gd = blocksOf(stepSteps, blockSteps(r, *g), true);
    const bool byColumns = g->columns >= 3 * g->reach + gb + 2 * gd, byBlocks = r.blocks >= 3 * r.margin() + b + 2 * d;
    // The share of the region each keeps in its first run.
    const double columnShare = static_cast<double>(2 * g->reach + gb) / static_cast<double>(g->columns);
    const double blockShare = static_cast<double>(2 * r.margin() + b) / static_cast<double>(r.blocks);
    if (byColumns && (!byBlocks || columnShare < blockShare)) chosen.push_back(std::move(*g));
  }
  std::stable_sort(chosen.begin(), chosen.end(),
                   [](const Grid& x, const Grid& y) { return x.end() - x.start() > y.end() - y.start(); });
  auto overlaps = [](size_t a0, size_t a1, size_t b0, size_t b1) { return a0 < b1 && b0 < a1; };
  std::vector<Grid> kept;
  for (Grid& g : chosen)
    if (std::none_of(kept.begin(), kept.end(),
                     [&](const Grid& k) { return overlaps(g.start(), g.end(), k.start(), k.end()); }))
      kept.push_back(std::move(g));
  std::sort(kept.begin(), kept.end(), [](const Grid& x, const Grid& y) { return x.start() < y.start(); });
  // The regions no grid covers, and the grids, in step order.
  std::vector<PeriodicRegion> out;
  grids->clear();
  size_t next = 0;
  for (const PeriodicRegion& r : regions) {
    while (next < kept.size() && kept[next].start() < r.start)
      out.push_back(kept[next].asRegion()), grids->push_back(kept[next++]);
    // A region no grid covers; or the passes a grid's rows run through, cut by blocks beside its columns.
    const bool passes = std::any_of(kept.begin(), kept.end(), [&](const Grid& k) {
      return k.passes.blocks > 0 && k.passes.start == r.start && k.passes.period == r.period;
    });
    if (passes || std::none_of(kept.begin(), kept.end(),
                               [&](const Grid& k) { return overlaps(r.start, r.end(), k.start(), k.end()); }))
      out.push_back(r), grids->push_back(Grid{});
  }
  while (next < kept.size()) out.push_back(kept[next].asRegion()), grids->push_back(kept[next++]);
  return out;
}

}  // namespace myriad::netsim
