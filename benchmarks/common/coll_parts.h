// Entries that several collectives' tables share: nccl-tests' ways of cutting a message into counts, its
// bandwidth formulas, and the #wrong count of data-moving collectives against the byte pattern of
// tests/common/reference.h. Invariant: nothing here calls the library; expected values come from the host.
#pragma once

#include <cstddef>
#include <cstdint>

#include "benchmarks/common/collective.h"

namespace myriad::bench {

// One buffer of bytes / typeSize elements, sent and received whole (all-reduce, broadcast, reduce, sendrecv).
CollCounts wholeCounts(size_t bytes, size_t typeSize, int nranks);
// nccl-tests' block per rank of a sharded message (all-gather, reduce-scatter, all-to-all): bytes / typeSize /
// nranks elements, rounded down to a multiple of 16 bytes.
size_t blockCount(size_t bytes, size_t typeSize, int nranks);

// This rank's reduction input (tests/common/reference.h) over its whole send buffer: all-reduce, reduce,
// reduce-scatter.
void reductionInput(const CollArgs& args, void* send, uint64_t salt);

// This rank's byte pattern (tests/common/reference.h) over its whole send buffer: all-gather, all-to-all,
// sendrecv.
void patternInput(const CollArgs& args, void* send, uint64_t salt);

// algbw = bytes / seconds / 1e9 (GB/s, 0 for no time); busbw = algbw * factor.
void scaledBw(size_t bytes, double seconds, double factor, double* algBw, double* busBw);
// busbw = algbw: broadcast, reduce, sendrecv.
void unitBw(size_t bytes, double seconds, int nranks, double* algBw, double* busBw);
// busbw = algbw * (n-1)/n: all-gather, reduce-scatter, all-to-all.
void shardedBw(size_t bytes, double seconds, int nranks, double* algBw, double* busBw);

// Elements of got[0..count) (of elemSize bytes) with any byte that differs from rank `source`'s pattern
// starting at byte firstOffset of its send buffer.
size_t patternWrong(const void* got, size_t count, size_t elemSize, int source, size_t firstOffset, uint64_t salt);

}  // namespace myriad::bench
