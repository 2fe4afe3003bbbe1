// Schedule pieces that algorithms compose: a ring all-gather and a ring reduce-scatter over any Group,
// each over one or more "layers" (independent block sets moved by the same ring, interleaved step by step
// so that one layer's slices fill the gaps of another's). A piece adds its steps to a Schedule, starts
// after `after`, and returns one step that is done when all of its steps are (sends included, so its
// buffers may be reused after it). allreduce.hier, allgather.hier and reducescatter.hier are built from them.
#pragma once

#include <cstddef>
#include <span>

#include "algorithms/layout.h"
#include "plan/schedule.h"

namespace myriad {

// All-gather layer: member i's block lies at buf + blocks.offset[i]; this rank's block is copied there from
// `mine` first, unless `mine` is unset (already in place).
struct GatherLayer {
  BufRef buf;
  Blocks blocks;
  BufRef mine;
};

// Reduce-scatter layer: member i's input block lies at in + blocks.offset[i]; this rank's reduced block goes
// to `out` (which may be its own input block: in place).
struct ReduceLayer {
  BufRef in;
  Blocks blocks;
  BufRef out;
};

// Defined in algorithms/allgather/ring.cc.
Schedule::Step ringAllGatherSteps(Schedule& s, const Group& g, std::span<const GatherLayer> layers, size_t elemSize,
                                  size_t chunk, const Schedule::Deps& after);

// Defined in algorithms/reducescatter/ring.cc. Scratch bytes the piece needs; the caller reserves them.
size_t ringReduceScatterScratch(const Group& g, std::span<const ReduceLayer> layers, size_t elemSize, size_t chunk);
// `op` myrAvg reduces as a sum; the caller divides at the end.
Schedule::Step ringReduceScatterSteps(Schedule& s, const Group& g, std::span<const ReduceLayer> layers,
                                      myrDataType_t dtype, myrRedOp_t op, BufRef scratch, size_t chunk,
                                      const Schedule::Deps& after);

}  // namespace myriad
