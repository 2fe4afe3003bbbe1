// Reduction inputs and reference results. sum/avg draw from [-m, m] (unsigned: [0, m]) with m chosen so
// that nranks * m stays inside the type's exact range; prod uses ±1 with a single 2 per index, so products
// never exceed 2 in magnitude; max/min draw from [-8, 8] (unsigned: [0, 16]), exact even in fp8. For sum and
// avg of float types an index is, by its hash, one of three kinds: those integers (mixed signs), fractions of
// one sign, or fractions of mixed signs; a fraction is ±(1 + f) * 2^e (fractionExponent), f a random multiple
// of the type's ulp of 1, so it is exact in the type and every sum of such values may round.
#include "tests/common/reference.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <vector>

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

enum class IndexKind { kIntegers, kFractionsOneSign, kFractionsMixedSigns };

IndexKind indexKind(myrDataType_t type, myrRedOp_t op, size_t index, uint64_t salt) {
  if (!isFloatType(type) || (op != myrSum && op != myrAvg)) return IndexKind::kIntegers;
  return static_cast<IndexKind>(elementHash(-1, index, salt ^ 0x7f4a7c15ULL) % 3);
}

// ±(1 + f) * 2^exponent, f a random multiple of the type's ulp of 1: exact in the type.
double fractionValue(myrDataType_t type, bool negative, uint64_t h, int exponent) {
  const int bits = mantissaBits(type);
  const double v = std::ldexp(1.0 + std::ldexp(static_cast<double>(h >> (64 - bits)), -bits), exponent);
  return roundToType(negative ? -v : v, type);  // exact but where the exponent falls outside the type's range
}

// The exponent of rank's fraction. fp16 and wider: -1, 0 or 1 by the hash, magnitudes alike. fp8: the rank
// index % n holds a dominant value in [4, 8) and the others values below 2^-(ceil(log2 n) + k), k = 1 (e4m3) or
// 3 (e5m2), but normal. With alike magnitudes a ring's n - 1 roundings of 3 or 4 bits may add up to the size of
// the result itself, and no sound bound could tell a right sum from zero; with one dominant value the bound of
// sumErrorBound stays below it (up to 32 ranks), yet the small values round, and some are absorbed.
int fractionExponent(myrDataType_t type, int rank, int nranks, size_t index, uint64_t h) {
  if (dataTypeSize(type) > 1) return static_cast<int>(h & 3) % 3 - 1;
  if (static_cast<size_t>(rank) == index % static_cast<size_t>(std::max(nranks, 1))) return 2;
  const int k = type == myrFloat8e5m2 ? 3 : 1, minNormal = type == myrFloat8e5m2 ? -14 : -6;
  return std::max(-static_cast<int>(std::ceil(std::log2(std::max(nranks, 2)))) - k, minNormal);
}

// Half an ulp of every internal node of any binary tree summing `mags` (sorted, largest first). Sorting the
// internal nodes of a tree of m leaves by size, the k-th holds at most m - k + 1 leaves, so its exact partial is
// at most T_j, the sum of the j = m - k + 1 largest magnitudes, and its computed partial at most T_j + E, E the
// total error: E <= sum over j = 2..m of ulp(T_j + E) / 2, iterated to its fixed point from E = 0.
double treeRoundingBound(const std::vector<double>& mags, myrDataType_t type) {
  double bound = 0;
  for (int iteration = 0; iteration < 16 && mags.size() > 1; ++iteration) {
    double next = 0, top = mags[0];
    for (size_t j = 1; j < mags.size(); ++j) next += ulpOf((top += mags[j]) + bound, type) / 2;
    if (next == bound) break;
    bound = next;
  }
  return bound;
}

// The worst error of the sum at `index` computed as any tree of pairwise additions, each rounded once to the
// type: what every algorithm does (a ring's chain of n - 1 recv-reduce steps from any start, a tree's or
// halving-doubling's levels, a hierarchy's host then cross-host stages). The smaller of two bounds:
// treeRoundingBound of all inputs; and one that follows the path from the largest input's leaf to the root.
// Each node on it adds a subtree of the other inputs (the subtrees are disjoint and cover them all) and errs by
// at most that subtree's computed value, since the other operand is a representable neighbour of the sum; a
// subtree of m leaves computes at most its inputs' magnitudes times (1 + u)^(m - 1), u = 2^-(bits + 1); so the
// path errs by at most sigma * G, sigma the other inputs' magnitudes and G = (1 + u)^(n - 2), and the n - 2
// nodes off the path by half an ulp of sigma * G each.
double sumErrorBound(myrDataType_t type, myrRedOp_t op, int nranks, size_t index, uint64_t salt) {
  std::vector<double> mags;
  for (int r = 0; r < nranks; ++r) mags.push_back(std::fabs(inputValue(type, op, r, nranks, index, salt)));
  std::sort(mags.begin(), mags.end(), std::greater<>());
  const double all = treeRoundingBound(mags, type);
  if (mags.size() < 2) return all;
  double sigma = 0;
  for (size_t j = 1; j < mags.size(); ++j) sigma += mags[j];
  const double u = std::ldexp(1.0, -mantissaBits(type) - 1);
  const double offPath = sigma * std::pow(1 + u, static_cast<double>(mags.size() - 2));
  return std::min(all, offPath + static_cast<double>(mags.size() - 2) * ulpOf(offPath, type) / 2);
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
      const IndexKind kind = indexKind(type, op, index, salt);
      if (kind != IndexKind::kIntegers) {
        const bool oneSign = kind == IndexKind::kFractionsOneSign;
        const bool negative = oneSign ? (elementHash(-1, index, salt) >> 7) & 1 : (h >> 2) & 1;
        return fractionValue(type, negative, h, fractionExponent(type, rank, nranks, index, h));
      }
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

// The bound on |got - want| for sum and avg of float types (0 elsewhere, and for integer inputs whose partial
// sums are all exact): E (sumErrorBound) for the library's sum; for avg the sum's E / n, then 1 ulp for the
// division (narrow types divide in float and round again); plus half an ulp for the rounding of the reference
// itself, and for float64, whose reference sums in double too, the reference's own E. Each rounding counts half
// an ulp: a narrow sum of two values is exact in float, so it rounds once. With inputs of one sign, n ranks
// give at most (n - 1) / 2 ulps of the sum, so in fp16 and wider a lost rank's contribution fails; for fp8 the
// inputs keep it under the result (fractionExponent), so an all-zero result fails at 16 ranks too.
double tolerance(myrDataType_t type, myrRedOp_t op, int nranks, size_t index, uint64_t salt) {
  if (!isFloatType(type) || (op != myrSum && op != myrAvg)) return 0;
  if (op == myrSum && indexKind(type, op, index, salt) == IndexKind::kIntegers && resultIsExact(type, op, nranks))
    return 0;
  const double want = expectedValue(type, op, nranks, index, salt);
  double e = sumErrorBound(type, op, nranks, index, salt);
  if (type == myrFloat64) e *= 2;
  if (op == myrSum) return e + ulpOf(want, type) / 2;
  const double n = std::max(nranks, 1);
  return e / n + ulpOf(std::fabs(want) + e / n, type) + ulpOf(want, type) / 2;
}

Mismatches checkReduction(const void* out, size_t count, myrDataType_t type, myrRedOp_t op, int nranks, uint64_t salt,
                          size_t firstIndex) {
  Mismatches m;
  for (size_t i = 0; i < count; ++i) {
    const double got = loadValue(out, i, type);
    const double want = expectedValue(type, op, nranks, firstIndex + i, salt);
    if (got == want || closeEnough(got, want, tolerance(type, op, nranks, firstIndex + i, salt))) continue;
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
