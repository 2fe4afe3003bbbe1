// Known inputs and expected results of reductions, computed on the host without the library; shared by
// tests/mp and the benchmarks' -c check. Invariant: inputs are small integers exact in every type, chosen
// so that every partial sum or product is exact too (within the type's exact range); beyond that range,
// and for avg of float types, results are compared with a tolerance instead of exactly.
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
// Compares out[0..count) with expectedValue.
Mismatches checkReduction(const void* out, size_t count, myrDataType_t type, myrRedOp_t op, int nranks,
                          uint64_t salt = 0);

}  // namespace myriad::test
