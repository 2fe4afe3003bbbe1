// Known inputs and expected results of reductions, computed on the host without the library; shared by
// tests/mp and the benchmarks' -c check. Data-moving collectives use a byte pattern instead, a function of
// (source rank, byte offset in the source's buffer, salt) that any rank can recompute. Invariant: inputs are small
// integers exact in every type, chosen so that every partial sum or product is exact too (within the type's exact
// range); beyond that range, and for avg of float types, results are compared with a tolerance instead of exactly.
#pragma once

#include <cstddef>
#include <cstdint>

#include "myriad/myriad.h"

namespace myriad::test {

// What rank `rank` of `nranks` contributes at `index`; `salt` varies the pattern between runs.
double inputValue(myrDataType_t type, myrRedOp_t op, int rank, int nranks, size_t index, uint64_t salt = 0);
void fillInput(void* buffer, size_t count, myrDataType_t type, myrRedOp_t op, int rank, int nranks, uint64_t salt = 0);

// op over all ranks of inputValue at `index`, as the library should store it (rounded to the type).
double expectedValue(myrDataType_t type, myrRedOp_t op, int nranks, size_t index, uint64_t salt = 0);
bool closeEnough(double got, double want, myrDataType_t type, myrRedOp_t op, int nranks);

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
