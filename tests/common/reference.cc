// Reduction inputs and reference results. sum/avg draw from [-m, m] (unsigned: [0, m]) with m chosen so
// that nranks * m stays inside the type's exact range; prod uses ±1 with a single 2 per index, so products
// never exceed 2 in magnitude; max/min draw from [-8, 8] (unsigned: [0, 16]), exact even in fp8.
#include "tests/common/reference.h"

#include <algorithm>
#include <cmath>

#include "tests/common/dtype_values.h"

namespace myriad::test {
namespace {

uint64_t mix(uint64_t x) {
  x ^= x >> 31;
  x *= 0xbf58476d1ce4e5b9ULL;
  x ^= x >> 29;
  x *= 0x94d049bb133111ebULL;
  x ^= x >> 32;
  return x;
}

uint64_t elementHash(int rank, size_t index, uint64_t salt) {
  return mix(static_cast<uint64_t>(index) * 0x9e3779b97f4a7c15ULL ^
             (static_cast<uint64_t>(rank) + 1) * 0xd1b54a32d192ed03ULL ^ mix(salt + 0x632be59bd9b4e019ULL));
}

// Largest magnitude of a sum/avg input that keeps every partial sum exact; at least 1.
int sumMagnitude(myrDataType_t type, int nranks) {
  const double m = std::floor(exactIntegerLimit(type) / std::max(nranks, 1));
  return static_cast<int>(std::clamp(m, 1.0, 3.0));
}

bool resultIsExact(myrDataType_t type, myrRedOp_t op, int nranks) {
  if (op == myrSum || op == myrAvg) {
    return static_cast<double>(sumMagnitude(type, nranks)) * nranks <= exactIntegerLimit(type);
  }
  return true;
}

}  // namespace

double inputValue(myrDataType_t type, myrRedOp_t op, int rank, int nranks, size_t index, uint64_t salt) {
  const uint64_t h = elementHash(rank, index, salt);
  const bool negatives = isSignedType(type);
  switch (op) {
    case myrProd: {
      const double magnitude = index % static_cast<size_t>(std::max(nranks, 1)) == static_cast<size_t>(rank) ? 2 : 1;
      return negatives && (h & 8) ? -magnitude : magnitude;
    }
    case myrMax:
    case myrMin: {
      const auto v = static_cast<double>(h % 17);
      return negatives ? v - 8 : v;
    }
    default: {  // sum, avg
      const int m = sumMagnitude(type, nranks);
      if (!negatives) return static_cast<double>(h % static_cast<uint64_t>(m + 1));
      return static_cast<double>(h % static_cast<uint64_t>(2 * m + 1)) - m;
    }
  }
}

void fillInput(void* buffer, size_t count, myrDataType_t type, myrRedOp_t op, int rank, int nranks, uint64_t salt) {
  for (size_t i = 0; i < count; ++i) storeValue(buffer, i, type, inputValue(type, op, rank, nranks, i, salt));
}

double expectedValue(myrDataType_t type, myrRedOp_t op, int nranks, size_t index, uint64_t salt) {
  double acc = inputValue(type, op, 0, nranks, index, salt);
  for (int r = 1; r < nranks; ++r) {
    const double v = inputValue(type, op, r, nranks, index, salt);
    switch (op) {
      case myrProd: acc *= v; break;
      case myrMax: acc = std::max(acc, v); break;
      case myrMin: acc = std::min(acc, v); break;
      default: acc += v; break;
    }
  }
  if (op == myrAvg) acc = isFloatType(type) ? acc / nranks : std::trunc(acc / nranks);
  return roundToType(acc, type);
}

bool closeEnough(double got, double want, myrDataType_t type, myrRedOp_t op, int nranks) {
  if (got == want) return true;
  if (!isFloatType(type)) return false;
  if (op != myrAvg && resultIsExact(type, op, nranks)) return false;
  // avg may scale before or after summing, and inexact sums round at every step: allow a few ulps per rank.
  const double tolerance = (nranks + 1) * typeEpsilon(type) * std::max(1.0, std::fabs(want));
  return std::fabs(got - want) <= tolerance;
}

Mismatches checkReduction(const void* out, size_t count, myrDataType_t type, myrRedOp_t op, int nranks, uint64_t salt,
                          size_t firstIndex) {
  Mismatches m;
  for (size_t i = 0; i < count; ++i) {
    const double got = loadValue(out, i, type);
    const double want = expectedValue(type, op, nranks, firstIndex + i, salt);
    if (closeEnough(got, want, type, op, nranks)) continue;
    if (m.count++ == 0) {
      m.firstIndex = i;
      m.firstGot = got;
      m.firstWant = want;
    }
  }
  return m;
}

unsigned char patternByte(int source, size_t offset, uint64_t salt) {
  return static_cast<unsigned char>(elementHash(source, offset, salt ^ 0x5bd1e995ULL) >> 24);
}

void fillPattern(void* buffer, size_t bytes, int source, size_t firstOffset, uint64_t salt) {
  auto* out = static_cast<unsigned char*>(buffer);
  for (size_t i = 0; i < bytes; ++i) out[i] = patternByte(source, firstOffset + i, salt);
}

}  // namespace myriad::test
