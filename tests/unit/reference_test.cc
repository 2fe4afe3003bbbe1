// The reduction reference's tolerance (tests/common/reference.cc) against the library's own host kernels
// (src/exec/reduce.h): sums and averages computed in the orders the algorithms use -- a ring's chain from any
// start, a balanced tree -- must pass for every type and rank count; an all-zero result, and for fp16 and wider
// a result missing one rank's contribution, must fail. Invariant: the bound is sound (first test) and tight
// enough to catch those wrong results (the others), both measured on the same seeded inputs.
#include "tests/common/reference.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "exec/reduce.h"
#include "tests/common/dtype_values.h"

namespace myriad::test {
namespace {

constexpr size_t kCount = 3001;
constexpr uint64_t kSalt = 0x5eed;
using Buffer = std::vector<unsigned char>;

std::vector<Buffer> inputs(myrDataType_t type, myrRedOp_t op, int n) {
  std::vector<Buffer> in(static_cast<size_t>(n), Buffer(kCount * dataTypeSize(type)));
  for (int r = 0; r < n; ++r) fillInput(in[static_cast<size_t>(r)].data(), kCount, type, op, r, n, kSalt);
  return in;
}

// The ring's order: start, start + 1, ... (mod n), each step one rounded pairwise sum; `skip` leaves a rank out.
Buffer chain(const std::vector<Buffer>& in, myrDataType_t type, myrRedOp_t op, int start, int skip = -1) {
  const int n = static_cast<int>(in.size());
  Buffer acc(in[0].size(), 0);
  bool first = true;
  for (int k = 0; k < n; ++k) {
    const int r = (start + k) % n;
    if (r == skip) continue;
    if (first) acc = in[static_cast<size_t>(r)];
    if (!first) reduce(acc.data(), acc.data(), in[static_cast<size_t>(r)].data(), kCount, type, myrSum);
    first = false;
  }
  if (op == myrAvg) scaleAvg(acc.data(), kCount, type, n);
  return acc;
}

// Halving-doubling's and a tree's order: pairs, then pairs of pairs.
Buffer tree(std::vector<Buffer> in, myrDataType_t type, myrRedOp_t op) {
  const int n = static_cast<int>(in.size());
  for (size_t stride = 1; stride < in.size(); stride *= 2)
    for (size_t i = 0; i + stride < in.size(); i += 2 * stride)
      reduce(in[i].data(), in[i].data(), in[i + stride].data(), kCount, type, myrSum);
  if (op == myrAvg) scaleAvg(in[0].data(), kCount, type, n);
  return in[0];
}

size_t wrong(const Buffer& out, myrDataType_t type, myrRedOp_t op, int n) {
  return checkReduction(out.data(), kCount, type, op, n, kSalt).count;
}

std::string what(myrDataType_t type, myrRedOp_t op, int n) {
  return std::string(dataTypeName(type)) + " " + redOpName(op) + " n=" + std::to_string(n);
}

const int kRanks[] = {1, 2, 3, 5, 7, 8, 9, 16};

TEST(ReferenceTolerance, AcceptsEveryOrderTheAlgorithmsUse) {
  for (int t = 0; t < kNumDataTypes; ++t) {
    const auto type = static_cast<myrDataType_t>(t);
    for (myrRedOp_t op : {myrSum, myrAvg}) {
      for (int n : kRanks) {
        const auto in = inputs(type, op, n);
        for (int start : {0, n / 2, n - 1})
          EXPECT_EQ(wrong(chain(in, type, op, start), type, op, n), 0u) << what(type, op, n) << " chain from " << start;
        EXPECT_EQ(wrong(tree(in, type, op), type, op, n), 0u) << what(type, op, n) << " tree";
      }
    }
  }
}

TEST(ReferenceTolerance, RejectsAnAllZeroResult) {
  for (myrDataType_t type : {myrFloat16, myrBfloat16, myrFloat8e4m3, myrFloat8e5m2, myrFloat32, myrFloat64}) {
    for (myrRedOp_t op : {myrSum, myrAvg}) {
      for (int n : kRanks) {
        const size_t count = wrong(Buffer(kCount * dataTypeSize(type), 0), type, op, n);
        // Most elements: only those whose bound covers |want| (cancelling signs, or fp8 at many ranks) pass.
        EXPECT_GT(count, kCount / 2) << what(type, op, n);
      }
    }
  }
}

TEST(ReferenceTolerance, RejectsALostContributionFromFp16Up) {
  for (myrDataType_t type : {myrFloat16, myrBfloat16, myrFloat32, myrFloat64}) {
    for (myrRedOp_t op : {myrSum, myrAvg}) {
      for (int n : kRanks) {
        if (n == 1) continue;
        const auto in = inputs(type, op, n);
        EXPECT_GT(wrong(chain(in, type, op, 0, n - 1), type, op, n), kCount / 4) << what(type, op, n);
      }
    }
  }
}

TEST(ReferenceTolerance, Fp8AtSixteenRanksRoundsAndStaysTight) {
  // The exact sum is not representable (the reference rounds) at most indices, and the bound stays below |want|
  // at most, so zero fails there: every index but the integer third, whose fp8 sums at 16 ranks round too.
  for (myrDataType_t type : {myrFloat8e4m3, myrFloat8e5m2}) {
    for (myrRedOp_t op : {myrSum, myrAvg}) {
      size_t rounded = 0, tight = 0;
      for (size_t i = 0; i < kCount; ++i) {
        double exact = 0;
        for (int r = 0; r < 16; ++r) exact += inputValue(type, op, r, 16, i, kSalt);
        if (op == myrAvg) exact /= 16;
        const double want = expectedValue(type, op, 16, i, kSalt);
        rounded += want != exact;
        tight += tolerance(type, op, 16, i, kSalt) < std::fabs(want);
      }
      EXPECT_GT(rounded, kCount / 2) << what(type, op, 16);
      EXPECT_GT(tight, kCount / 2) << what(type, op, 16);
    }
  }
}

}  // namespace
}  // namespace myriad::test
