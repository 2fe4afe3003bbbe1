// Known inputs and expected results of reductions, computed on the host without the library; shared by
// tests/mp and the benchmarks' -c check. Data-moving collectives use a byte pattern instead, a function of
// (source rank, byte offset in the source's buffer, salt) that any rank can recompute. Invariant: integer types,
// prod, max and min get small integers whose every partial result is exact, so they compare exactly; sum and avg
// of float types also get, at two thirds of the indices, fractions with a full random significand (every
// partial sum rounds), compared within a bound on the rounding any order of pairwise sums may do (tolerance()).
#pragma once

#include <cmath>
#include <cstddef>
#include <cstdint>

#include "myriad/myriad.h"

namespace myriad::test {

// What rank `rank` of `nranks` contributes at `index`; `salt` varies the pattern between runs.
double inputValue(myrDataType_t type, myrRedOp_t op, int rank, int nranks, size_t index, uint64_t salt = 0);
void fillInput(void* buffer, size_t count, myrDataType_t type, myrRedOp_t op, int rank, int nranks, uint64_t salt = 0);

// op over all ranks of inputValue at `index`, as the library should store it (rounded to the type).
double expectedValue(myrDataType_t type, myrRedOp_t op, int nranks, size_t index, uint64_t salt = 0);
// How far a correct result at `index` may lie from expectedValue: 0 where it must be exact (see reference.cc).
double tolerance(myrDataType_t type, myrRedOp_t op, int nranks, size_t index, uint64_t salt = 0);
inline bool closeEnough(double got, double want, double tolerance) {
  return got == want || std::fabs(got - want) <= tolerance;
}

struct Mismatches {
  size_t count = 0;
  size_t firstIndex = 0;  // valid when count > 0
  double firstGot = 0;
  double firstWant = 0;
};
// Compares out[0..count) with expectedValue at indices firstIndex.. (reduce-scatter: rank r's block).
Mismatches checkReduction(const void* out, size_t count, myrDataType_t type, myrRedOp_t op, int nranks,
                          uint64_t salt = 0, size_t firstIndex = 0);

// Byte `offset` of rank `source`'s send buffer.
unsigned char patternByte(int source, size_t offset, uint64_t salt);
// buffer[i] = patternByte(source, firstOffset + i, salt) for i < bytes.
void fillPattern(void* buffer, size_t bytes, int source, size_t firstOffset, uint64_t salt);

}  // namespace myriad::test
