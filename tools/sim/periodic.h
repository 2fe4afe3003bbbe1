// Periodic regions of plan shapes, and shapes with blocks of them cut out. A ring's rounds and a tree's
// pipeline slices repeat one pattern of steps thousands of times; once a run has settled, each repetition
// adds the same time. A region here is `blocks` repetitions of `period` steps in which every step is alike
// the step one period on: the same kind, slot, size, number of dependencies, and distances to the steps it
// unblocks. Cutting blocks out of a region gives the plan of the same pattern repeated fewer times: a
// dependency that led into the cut now leads to its counterpart past it, so every step keeps its number of
// dependencies and the pattern its shape (steady.h runs such cut plans and extrapolates). A far dependency
// (from a step more than 16 wait for, or to one that waits for more than 16: a piece's opening and closing
// joins) that is longer than the region's farBeyond is not part of the pattern: it is compared by the step
// it reaches, and one to a removed step is dropped (the join then waits for the steps that are left).
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "tools/sim/plan_set.h"

namespace myriad::netsim {

struct PeriodicRegion {
  size_t start = 0;     // its first step
  uint32_t period = 0;  // steps per block
  uint64_t blocks = 0;
  size_t span = 0;       // the longest dependency (in steps) compared by distance that starts or ends in it
  size_t farBeyond = 0;  // far dependencies longer than this are compared by the step they reach

  size_t end() const { return start + period * blocks; }
  // Blocks that must stay at each end of the region, and the fewest that may be cut, so that no dependency
  // crosses a cut or reaches into the blocks removed: ceil(span / period).
  uint64_t margin() const { return (span + period - 1) / period; }
};

// The periodic regions of `shape` of at least minSteps steps, in step order and not overlapping (where two
// overlap, the one covering more steps, then the shorter period, is kept). Periods up to maxPeriod, with 8
// blocks at least, and far dependencies compared by the step they reach; and periods that are recurring
// distances between joins (a piece run in passes), with 4 blocks at least and the far dependencies within a
// period compared by distance.
std::vector<PeriodicRegion> periodicRegions(const PlanShape& shape, uint64_t minSteps, uint32_t maxPeriod = 64);

// Whether the dependency i -> j of `shape` is compared by the step it reaches, not by distance: it is far
// (leaves a step more than 16 wait for, or enters one that waits for more than 16) and longer than `beyond`
// steps (a region's farBeyond).
bool comparedByStep(const PlanShape& shape, size_t i, size_t j, size_t beyond);
// Whether steps i and j of `shape` are alike: the same kind, slot, size and number of dependencies, and the
// same dependents at the same distances (far ones longer than `beyond` compared by the step they reach).
bool stepsAlike(const PlanShape& shape, size_t i, size_t j, size_t beyond);
// Steps that wait for more than this many are joins (a piece's end); so are steps more than this many wait for.
constexpr uint32_t kFarFanOut = 16;

struct BlockCut {
  PeriodicRegion region;
  uint64_t blocks = 0;    // removed: at least region.margin(), or 0 for none
  uint64_t keepBack = 0;  // blocks kept after the removed ones, at least region.margin()
  uint32_t shift = 0;     // steps (below a period) the removed blocks sit earlier still, to align messages

  // The removed steps [from(), to()).
  size_t to() const { return region.end() - keepBack * region.period - shift; }
  size_t from() const { return to() - blocks * region.period; }
};

// `shape` with the cuts made (cuts in step order, each within its region's bounds as above).
PlanShape cutShape(const PlanShape& shape, const std::vector<BlockCut>& cuts);

// The range of a slot's sends (receives) that a cut of `shape` removes, as message ordinals [first, last).
struct OrdinalRange {
  uint32_t first = 0, last = 0;
  bool operator==(const OrdinalRange&) const = default;
};
OrdinalRange removedMessages(const PlanShape& shape, const BlockCut& cut, uint32_t slot, bool sends);

}  // namespace myriad::netsim
