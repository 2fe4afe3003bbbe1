// Timed loops and cross-rank numbers. Gathering is a sum of a zeroed buffer in which each rank wrote only its
// own slot, one byte per double: exact, and needs nothing from a library beyond an all-reduce of doubles.
#include "benchmarks/common/timing.h"

#include <chrono>
#include <cstring>

namespace myriad::bench {

std::string callError(const char* call, myrResult_t result, myrComm_t comm) {
  std::string text = std::string(call) + " failed: " + myrGetErrorString(result);
  const char* last = comm != nullptr ? myrGetLastError(comm) : nullptr;
  if (last != nullptr && *last != '\0') text += std::string(": ") + last;
  return text;
}

bool timeCalls(RankOps& ops, int warmup, int iters, const std::function<bool(std::string* error)>& call,
               double* seconds, std::string* error) {
  for (int i = 0; i < warmup; ++i) {
    if (!call(error)) {
      *error = "warmup " + *error;
      return false;
    }
  }
  if (!ops.sync(error)) return false;
  double barrier = 0;  // ranks leave the barrier together, so their clocks start close to each other
  if (!ops.allReduceDoubles(&barrier, 1, myrSum, error)) return false;
  const auto t0 = std::chrono::steady_clock::now();
  for (int i = 0; i < iters; ++i) {
    if (!call(error)) {
      *error = "timed " + *error;
      return false;
    }
  }
  if (!ops.sync(error)) return false;
  const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  *seconds = elapsed / (iters > 0 ? iters : 1);
  return true;
}

bool combineAcrossRanks(RankOps& ops, double value, Average how, double* combined, std::string* error) {
  double v = value;
  switch (how) {
    case Average::kRank0:
      v = ops.rank() == 0 ? value : 0.0;
      if (!ops.allReduceDoubles(&v, 1, myrSum, error)) return false;
      break;
    case Average::kMean:
      if (!ops.allReduceDoubles(&v, 1, myrSum, error)) return false;
      v /= ops.nranks();
      break;
    case Average::kMin:
      if (!ops.allReduceDoubles(&v, 1, myrMin, error)) return false;
      break;
    case Average::kMax:
      if (!ops.allReduceDoubles(&v, 1, myrMax, error)) return false;
      break;
  }
  *combined = v;
  return true;
}

bool sumAcrossRanks(RankOps& ops, double value, double* sum, std::string* error) {
  double v = value;
  if (!ops.allReduceDoubles(&v, 1, myrSum, error)) return false;
  *sum = v;
  return true;
}

bool gatherBytes(RankOps& ops, const void* mine, size_t bytes, std::vector<unsigned char>* all, std::string* error) {
  std::vector<double> slots(bytes * static_cast<size_t>(ops.nranks()), 0.0);
  const auto* in = static_cast<const unsigned char*>(mine);
  for (size_t i = 0; i < bytes; ++i) slots[bytes * static_cast<size_t>(ops.rank()) + i] = in[i];
  if (!ops.allReduceDoubles(slots.data(), slots.size(), myrSum, error)) {
    *error = "gathering rank descriptions: " + *error;
    return false;
  }
  all->resize(slots.size());
  for (size_t i = 0; i < slots.size(); ++i) (*all)[i] = static_cast<unsigned char>(slots[i]);
  return true;
}

}  // namespace myriad::bench
