// unit tier: the device reduction functors (src/device/reduce_op.h) run on the CPU, for every dtype x op and
// the average's division, against a reference written here (values in double, narrow formats decoded from
// their bit fields and rounded by searching the nearest code, ties to even), and bit for bit against the
// host kernels (myriad::reduce, myriad::scaleAvg), NaN payloads included.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <type_traits>
#include <vector>

#include "device/narrow_float.h"
#include "device/reduce_host.h"
#include "exec/float_formats.h"
#include "exec/reduce.h"
#include "plan/dtype.h"

namespace myriad {
namespace {

// ---- the reference: narrow formats from their bit fields ----

struct RefFormat {
  int bits;     // 16 or 8
  int manBits;  // mantissa bits
  int bias;     // exponent bias
  bool ieee;    // exponent all ones is inf/NaN (fp16, bf16, E5M2); else only all ones is NaN (E4M3)
  int maxCode;  // the largest finite positive code; maxCode + 1 is the overflow result (inf, or E4M3's NaN)
  std::vector<double> positive;  // values of codes 0..maxCode+1, the last one as if the format went on

  double decodeField(int code, bool asNormal) const {
    int expBits = bits - 1 - manBits;
    int sign = (code >> (bits - 1)) & 1;
    int e = (code >> manBits) & ((1 << expBits) - 1);
    int m = code & ((1 << manBits) - 1);
    double s = sign ? -1.0 : 1.0;
    if (!asNormal) {
      if (ieee && e == (1 << expBits) - 1) return m ? NAN : s * INFINITY;
      if (!ieee && e == (1 << expBits) - 1 && m == (1 << manBits) - 1) return NAN;
    }
    if (e == 0) return s * std::ldexp(m, 1 - bias - manBits);
    return s * std::ldexp(1.0 + std::ldexp(m, -manBits), e - bias);
  }
  double decode(int code) const { return decodeField(code, false); }

  // The nearest code to x (ties to the even code), overflow past the largest finite value as IEEE rounding
  // does: to maxCode + 1 when x is nearer to the value that code would have. -1 for NaN.
  int round(double x) const {
    if (std::isnan(x)) return -1;
    int sign = std::signbit(x) ? 1 << (bits - 1) : 0;
    double ax = std::fabs(x);
    int code;
    if (ax >= positive.back()) {
      code = maxCode + 1;
    } else {
      auto hi = std::lower_bound(positive.begin(), positive.end(), ax);  // first value >= ax; never end
      code = static_cast<int>(hi - positive.begin());
      if (*hi != ax) {
        double up = *hi - ax, down = ax - positive[code - 1];
        if (down < up || (down == up && (code & 1))) --code;
      }
    }
    return sign | code;
  }
};

RefFormat makeFormat(int bits, int manBits, int bias, bool ieee, int maxCode) {
  RefFormat f{bits, manBits, bias, ieee, maxCode, {}};
  for (int c = 0; c <= maxCode + 1; ++c) f.positive.push_back(f.decodeField(c, c == maxCode + 1));
  return f;
}

const RefFormat& refFormat(myrDataType_t d) {
  static const RefFormat kHalf = makeFormat(16, 10, 15, true, 0x7bff);
  static const RefFormat kBf16 = makeFormat(16, 7, 127, true, 0x7f7f);
  static const RefFormat kE4M3 = makeFormat(8, 3, 7, false, 0x7e);
  static const RefFormat kE5M2 = makeFormat(8, 2, 15, true, 0x7b);
  switch (d) {
    case myrFloat16: return kHalf;
    case myrBfloat16: return kBf16;
    case myrFloat8e4m3: return kE4M3;
    default: return kE5M2;
  }
}

bool isNarrow(myrDataType_t d) {
  return d == myrFloat16 || d == myrBfloat16 || d == myrFloat8e4m3 || d == myrFloat8e5m2;
}

double refOp(double x, double y, myrRedOp_t op) {
  switch (op) {
    case myrProd: return x * y;
    case myrMax: return x > y ? x : y;
    case myrMin: return x < y ? x : y;
    default: return x + y;
  }
}

template <typename T>
T refIntOp(T x, T y, myrRedOp_t op) {
  switch (op) {
    case myrProd: return static_cast<T>(static_cast<uint64_t>(x) * static_cast<uint64_t>(y));
    case myrMax: return std::max(x, y);
    case myrMin: return std::min(x, y);
    default: return static_cast<T>(static_cast<uint64_t>(x) + static_cast<uint64_t>(y));
  }
}

// ---- the checks ----

uint64_t loadBits(const std::vector<uint8_t>& v, size_t i, size_t size) {
  uint64_t u = 0;
  std::memcpy(&u, v.data() + i * size, size);
  return u;
}

// The reference's verdict on one result element: empty when it agrees.
template <typename T>
std::string checkInt(const std::vector<uint8_t>& a, const std::vector<uint8_t>& b, const std::vector<uint8_t>& got,
                     size_t i, myrRedOp_t op) {
  T x, y, g;
  std::memcpy(&x, a.data() + i * sizeof(T), sizeof(T));
  std::memcpy(&y, b.data() + i * sizeof(T), sizeof(T));
  std::memcpy(&g, got.data() + i * sizeof(T), sizeof(T));
  T want = refIntOp(x, y, op);
  if (g == want) return "";
  return "got " + std::to_string(g) + ", want " + std::to_string(want);
}

template <typename F>
std::string checkWide(const std::vector<uint8_t>& a, const std::vector<uint8_t>& b, const std::vector<uint8_t>& got,
                      size_t i, myrRedOp_t op) {
  F x, y, g;
  std::memcpy(&x, a.data() + i * sizeof(F), sizeof(F));
  std::memcpy(&y, b.data() + i * sizeof(F), sizeof(F));
  std::memcpy(&g, got.data() + i * sizeof(F), sizeof(F));
  F want = static_cast<F>(refOp(x, y, op));  // double -> float rounds once more: innocuous (53 >= 2*24+2)
  if (std::isnan(want) ? std::isnan(g) : std::memcmp(&g, &want, sizeof(F)) == 0) return "";
  return "got " + std::to_string(g) + ", want " + std::to_string(want);
}

std::string checkNarrow(const std::vector<uint8_t>& a, const std::vector<uint8_t>& b, const std::vector<uint8_t>& got,
                        size_t i, myrDataType_t d, myrRedOp_t op) {
  const RefFormat& f = refFormat(d);
  size_t size = static_cast<size_t>(f.bits / 8);
  // Accumulated in float: the inputs are exact in float, the operation rounds to float once.
  float r = static_cast<float>(refOp(f.decode(loadBits(a, i, size)), f.decode(loadBits(b, i, size)), op));
  int want = f.round(r);
  int g = static_cast<int>(loadBits(got, i, size));
  if (want < 0 ? std::isnan(f.decode(g)) : g == want) return "";
  return "got code " + std::to_string(g) + ", want " + std::to_string(want) + " (float result " + std::to_string(r) +
         ")";
}

std::string checkElement(const std::vector<uint8_t>& a, const std::vector<uint8_t>& b, const std::vector<uint8_t>& got,
                         size_t i, myrDataType_t d, myrRedOp_t op) {
  switch (d) {
    case myrInt8: return checkInt<int8_t>(a, b, got, i, op);
    case myrUint8: return checkInt<uint8_t>(a, b, got, i, op);
    case myrInt32: return checkInt<int32_t>(a, b, got, i, op);
    case myrUint32: return checkInt<uint32_t>(a, b, got, i, op);
    case myrInt64: return checkInt<int64_t>(a, b, got, i, op);
    case myrUint64: return checkInt<uint64_t>(a, b, got, i, op);
    case myrFloat32: return checkWide<float>(a, b, got, i, op);
    case myrFloat64: return checkWide<double>(a, b, got, i, op);
    default: return checkNarrow(a, b, got, i, d, op);
  }
}

// Random elements: every bit pattern for narrow formats and integers (NaN, inf, subnormals, large values whose
// sums and products overflow); for float and double, ordinary values with random bit patterns mixed in.
std::vector<uint8_t> randomData(myrDataType_t d, size_t count, std::mt19937_64& rng) {
  size_t size = dtypeSize(d);
  std::vector<uint8_t> v(count * size);
  for (size_t i = 0; i < count; ++i) {
    uint64_t bits = rng();
    bool ordinary = rng() % 4 != 0;
    if (d == myrFloat32 && ordinary) {
      float x = std::uniform_real_distribution<float>(-1000, 1000)(rng);
      std::memcpy(&bits, &x, 4);
    } else if (d == myrFloat64 && ordinary) {
      double x = std::uniform_real_distribution<double>(-1e6, 1e6)(rng);
      std::memcpy(&bits, &x, 8);
    }
    std::memcpy(v.data() + i * size, &bits, size);
  }
  return v;
}

const myrDataType_t kTypes[] = {myrInt8,    myrUint8,   myrInt32,   myrUint32,   myrInt64,      myrUint64,
                                myrFloat16, myrFloat32, myrFloat64, myrBfloat16, myrFloat8e4m3, myrFloat8e5m2};
const myrRedOp_t kOps[] = {myrSum, myrProd, myrMax, myrMin, myrAvg};
const size_t kCounts[] = {0, 1, 7, 1000};

TEST(DeviceReduce, EveryDtypeAndOpAgreesWithReferenceAndHostKernels) {
  std::mt19937_64 rng(20240917);
  for (myrDataType_t d : kTypes) {
    for (myrRedOp_t op : kOps) {
      for (size_t count : kCounts) {
        SCOPED_TRACE(std::string(dtypeName(d)) + " " + opName(op) + " count " + std::to_string(count));
        size_t bytes = count * dtypeSize(d);
        std::vector<uint8_t> a = randomData(d, count, rng), b = randomData(d, count, rng);
        std::vector<uint8_t> got(bytes + 1, 0xa5), host(bytes + 1, 0xa5);
        deviceReduceOnHost(got.data(), a.data(), b.data(), count, d, op);
        reduce(host.data(), a.data(), b.data(), count, d, op);
        ASSERT_EQ(got[bytes], 0xa5) << "wrote past the end";
        ASSERT_EQ(0, std::memcmp(got.data(), host.data(), bytes)) << "differs from myriad::reduce";
        for (size_t i = 0; i < count; ++i) {
          std::string bad = checkElement(a, b, got, i, d, op);
          ASSERT_TRUE(bad.empty()) << "element " << i << ": " << bad;
        }
        // In place (dst aliases a): the same bytes.
        std::vector<uint8_t> inPlace = a;
        deviceReduceOnHost(inPlace.data(), inPlace.data(), b.data(), count, d, op);
        ASSERT_EQ(0, std::memcmp(inPlace.data(), got.data(), bytes)) << "in place differs";
      }
    }
  }
}

template <typename F>
F asFloat(uint64_t raw) {
  F f;
  std::memcpy(&f, &raw, sizeof(F));
  return f;
}

std::string checkScale(const std::vector<uint8_t>& in, const std::vector<uint8_t>& got, size_t i, myrDataType_t d,
                       int n) {
  size_t size = dtypeSize(d);
  uint64_t raw = loadBits(in, i, size), g = loadBits(got, i, size);
  uint64_t want;
  if (isNarrow(d)) {
    const RefFormat& f = refFormat(d);
    int code = f.round(static_cast<float>(f.decode(static_cast<int>(raw)) / n));
    if (code < 0) return std::isnan(f.decode(static_cast<int>(g))) ? "" : "want NaN";
    want = static_cast<uint64_t>(code);
  } else if (d == myrFloat32) {
    float q = static_cast<float>(static_cast<double>(asFloat<float>(raw)) / n);  // rounds once more: innocuous
    if (std::isnan(q)) return std::isnan(asFloat<float>(g)) ? "" : "want NaN";
    want = 0;
    std::memcpy(&want, &q, 4);
  } else if (d == myrFloat64) {
    double q = asFloat<double>(raw) / n;
    if (std::isnan(q)) return std::isnan(asFloat<double>(g)) ? "" : "want NaN";
    std::memcpy(&want, &q, 8);
  } else {
    // Integers: truncating division of the value (sign-extended when signed).
    bool isSigned = d == myrInt8 || d == myrInt32 || d == myrInt64;
    int shift = 64 - static_cast<int>(size) * 8;
    if (isSigned) {
      int64_t v = static_cast<int64_t>(raw << shift) >> shift;
      want = static_cast<uint64_t>(v / n);
    } else {
      want = raw / static_cast<uint64_t>(n);
    }
    if (size < 8) want &= (uint64_t{1} << (size * 8)) - 1;
  }
  if (g == want) return "";
  return "got bits " + std::to_string(g) + ", want " + std::to_string(want);
}

TEST(DeviceReduce, ScaleAvgAgreesWithReferenceAndHostKernels) {
  std::mt19937_64 rng(77);
  for (myrDataType_t d : kTypes) {
    for (int n : {1, 3, 8, 255, 1000}) {
      for (size_t count : kCounts) {
        SCOPED_TRACE(std::string(dtypeName(d)) + " n " + std::to_string(n) + " count " + std::to_string(count));
        size_t bytes = count * dtypeSize(d);
        std::vector<uint8_t> in = randomData(d, count, rng);
        std::vector<uint8_t> got = in, host = in;
        deviceScaleAvgOnHost(got.data(), count, d, n);
        scaleAvg(host.data(), count, d, n);
        ASSERT_EQ(0, std::memcmp(got.data(), host.data(), bytes)) << "differs from myriad::scaleAvg";
        for (size_t i = 0; i < count; ++i) {
          std::string bad = checkScale(in, got, i, d, n);
          ASSERT_TRUE(bad.empty()) << "element " << i << ": " << bad;
        }
      }
    }
  }
}

// The conversions on their own, over every narrow code and many floats: bit-identical to the host's.
TEST(DeviceReduce, ConversionsMatchHostBitForBit) {
  auto bits = [](float f) {
    uint32_t u;
    std::memcpy(&u, &f, 4);
    return u;
  };
  for (uint32_t c = 0; c < 65536; ++c) {
    auto h = static_cast<uint16_t>(c);
    ASSERT_EQ(bits(dev::halfToFloat(h)), bits(halfToFloat(h))) << c;
    ASSERT_EQ(bits(dev::bf16ToFloat(h)), bits(bf16ToFloat(h))) << c;
  }
  for (uint32_t c = 0; c < 256; ++c) {
    auto v = static_cast<uint8_t>(c);
    ASSERT_EQ(bits(dev::fp8e4m3ToFloat(v)), bits(fp8e4m3ToFloat(v))) << c;
    ASSERT_EQ(bits(dev::fp8e5m2ToFloat(v)), bits(fp8e5m2ToFloat(v))) << c;
  }
  std::mt19937 rng(5);
  for (int i = 0; i < 1000000; ++i) {
    uint32_t u = rng();
    if (i % 2) u = (u & 0x807fffffu) | ((100 + u % 60) << 23);  // half the draws near the narrow ranges
    float f;
    std::memcpy(&f, &u, 4);
    ASSERT_EQ(dev::floatToHalf(f), floatToHalf(f)) << u;
    ASSERT_EQ(dev::floatToBf16(f), floatToBf16(f)) << u;
    ASSERT_EQ(dev::floatToFp8e4m3(f), floatToFp8e4m3(f)) << u;
    ASSERT_EQ(dev::floatToFp8e5m2(f), floatToFp8e5m2(f)) << u;
  }
}

// The reference rounds as IEEE says at the edges it is easiest to get wrong.
TEST(DeviceReduce, ReferenceRoundingEdges) {
  const RefFormat& h = refFormat(myrFloat16);
  EXPECT_EQ(h.round(65504.0), 0x7bff);
  EXPECT_EQ(h.round(65519.0), 0x7bff);
  EXPECT_EQ(h.round(65520.0), 0x7c00);  // the tie goes to even: infinity
  EXPECT_EQ(h.round(-1e9), 0xfc00);
  EXPECT_EQ(h.round(std::ldexp(1.0, -25)), 0x0000);  // half the smallest subnormal: tie to even zero
  EXPECT_EQ(h.round(std::ldexp(3.0, -25)), 0x0002);  // 1.5 quanta: tie to even 2
  const RefFormat& e4 = refFormat(myrFloat8e4m3);
  EXPECT_EQ(e4.round(464.0), 0x7e);  // the tie between 448 and the overflow goes to 448
  EXPECT_EQ(e4.round(465.0), 0x7f);  // NaN
  const RefFormat& e5 = refFormat(myrFloat8e5m2);
  EXPECT_EQ(e5.round(61440.0), 0x7c);  // the tie between 57344 and the overflow: infinity
  EXPECT_EQ(e5.round(61439.0), 0x7b);
  EXPECT_EQ(e5.round(-0.0), 0x80);
}

}  // namespace
}  // namespace myriad
