// Column cuts: the steady state's cut for ring phases whose rounds are long. A ring over a host's G ranks
// moves its lane block in S slices a round for G-1 rounds, and slice s of a round waits for slice s (or one
// on) of the round before. As a periodic region (periodic.h) such rounds have a margin of a whole round, so
// a cut of whole blocks keeps two rounds of seven and does not pay; a reduce-scatter run in passes (a join
// after each pass's rounds) is a region of passes, of which a cut keeps four of sixteen. Seen as a grid of
// rows (rounds, in every pass) of S columns (slices), every dependency goes from a column to the same column
// or a few on, in its row or the next. Removing the same columns from every row leaves the same phase over
// fewer slices: each kept step keeps its number of dependencies (a dependency into the removed columns leads
// to its counterpart past them, as cutShape does; one into a join is dropped, and the join waits for the
// steps left), and the phase's time is affine in the columns kept.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "tools/sim/periodic.h"

namespace myriad::netsim {

struct Grid {
  std::vector<size_t> rows;  // each row's first step; a row is columns * period steps
  uint32_t period = 0;       // steps per column (a slice's steps)
  uint64_t columns = 0;
  uint64_t reach = 1;  // the most columns a dependency moves on, at least 1: kept on either side of a cut
  // The region of passes whose joins the rows cross (its period a pass), or blocks 0: a cut of whole passes
  // may go with a cut of columns (the steady state then extrapolates in both and their product).
  PeriodicRegion passes{};

  size_t start() const { return rows.front(); }
  size_t end() const { return rows.back() + columns * period; }
  // As a region for the steady state's bookkeeping: its steps, its period, its reach as the margin.
  PeriodicRegion asRegion() const;
};

// The grid around `seed`, a periodic region of `shape`, or none. The row length comes from the seed's
// dependencies that go a row on; rows are followed back and on from the seed's first step while each is
// periodic along its columns, across a join only where the seed's period is a pass (the rows after it are
// then the pass before's again). A grid is kept when every dependency that starts or ends in its rows
// (compared by distance, as a short period compares them) stays inside, goes a row on at most, and moves on
// by 0 to columns / 8 columns, never back.
std::optional<Grid> gridAround(const PlanShape& shape, const PeriodicRegion& seed);

// The cuts that remove `removed` columns from every row of `grid`, `keepBack` columns before each row's end,
// `shift` steps earlier still (below a period, to line up messages), in step order.
std::vector<BlockCut> columnCuts(const Grid& grid, uint64_t removed, uint64_t keepBack, uint32_t shift);

// The blocks of `period` steps that hold `steps`: 2 at least, a grid's columns 1 at least (a column is a
// slice in every row, hundreds of steps).
uint64_t blocksOf(uint64_t steps, uint64_t period, bool grid = false);
// The steps in one of a region's blocks: a grid's block is a column.
uint64_t blockSteps(const PeriodicRegion& r, const Grid& g);

// `regions` of `shape` with the grids around them in their place, each as one region, where a cut by columns
// keeps less of them than a cut by blocks would (base and step: the steps a first run keeps beyond the
// margins and adds, as SteadyOptions says). The regions a grid's rows cover are gone, except the passes they
// run through, kept to be cut by blocks as well. `grids` gets, beside each region, its grid (columns 0: a
// region cut by blocks).
std::vector<PeriodicRegion> withGrids(const PlanShape& shape, const std::vector<PeriodicRegion>& regions,
                                      uint64_t baseSteps, uint64_t stepSteps, std::vector<Grid>* grids);

}  // namespace myriad::netsim
