// Which calls the sim matrix runs, pruned by seed so the whole registry runs in about a minute on two cores:
// for each algorithm the full product count class {0, 1, n-1, 13, 1009} x every dtype x every op (where the
// collective reduces) x in place / out of place is dealt out over the single-host rank counts (each
// combination runs once, on a seeded rank count whose buffers stay small); every rank count also runs every
// count class, 65537 included, once; multi-host cases run each count class twice (in place and out), with
// seeded dtypes and ops, small-chunk cases three times that. Invariant: a given seed deals the same combinations to the
// same cases.
#pragma once

#include <cstdint>
#include <vector>

#include "tests/sim/sim_call.h"

namespace myriad::sim {

// Caps one call's user buffers, summed over its ranks.
inline constexpr size_t kMaxCallBytes = size_t{16} << 20;

// Per rank count of `ranks` (same order), the combinations it runs.
std::vector<std::vector<SimCombo>> dealCombos(CollKind kind, const std::vector<int>& ranks, uint64_t seed);
// Every count class twice (in place and out of place) per round, seeded dtypes and ops, for one case of n ranks.
std::vector<SimCombo> sampleCombos(CollKind kind, int n, uint64_t seed, int rounds = 1);

}  // namespace myriad::sim
