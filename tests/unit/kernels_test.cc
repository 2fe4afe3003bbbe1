// unit tier: narrow-float conversions and reduction kernels, checked against the independent host
// reference in tests/common (which does not use the library).
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>
#include <vector>

#include "exec/float_formats.h"
#include "exec/reduce.h"
#include "plan/dtype.h"
#include "tests/common/dtype_values.h"

namespace myriad {
namespace {

// Every float that a narrow format can encode round-trips, and values between codes round to the nearest
// (ties to even) exactly as the reference rounds them.
TEST(FloatFormats, AgreeWithReference) {
  std::mt19937 rng(12345);
  std::uniform_real_distribution<float> mag(-20.0f, 20.0f);
  for (int i = 0; i < 200000; ++i) {
    float x = std::ldexp(std::uniform_real_distribution<float>(-1, 1)(rng), static_cast<int>(mag(rng)));
    uint8_t buf[2];
    test::storeValue(buf, 0, myrFloat16, x);
    uint16_t want16;
    std::memcpy(&want16, buf, 2);
    ASSERT_EQ(floatToHalf(x), want16) << "half of " << x;
    ASSERT_EQ(halfToFloat(want16), static_cast<float>(test::loadValue(buf, 0, myrFloat16)));
    test::storeValue(buf, 0, myrBfloat16, x);
    std::memcpy(&want16, buf, 2);
    ASSERT_EQ(floatToBf16(x), want16) << "bf16 of " << x;
    test::storeValue(buf, 0, myrFloat8e4m3, x);
    if (std::fabs(x) <= 448) {
      ASSERT_EQ(floatToFp8e4m3(x), buf[0]) << "e4m3 of " << x;
    }
    test::storeValue(buf, 0, myrFloat8e5m2, x);
    if (std::fabs(x) <= 57344) {
      ASSERT_EQ(floatToFp8e5m2(x), buf[0]) << "e5m2 of " << x;
    }
  }
  for (int code = 0; code < 256; ++code) {
    uint8_t b = static_cast<uint8_t>(code);
    double want = test::loadValue(&b, 0, myrFloat8e4m3);
    if (!std::isnan(want)) {
      EXPECT_EQ(fp8e4m3ToFloat(b), want) << code;
    }
    want = test::loadValue(&b, 0, myrFloat8e5m2);
    if (!std::isnan(want)) {
      EXPECT_EQ(fp8e5m2ToFloat(b), want) << code;
    }
  }
}

TEST(FloatFormats, SpecialValues) {
  EXPECT_EQ(floatToHalf(INFINITY), 0x7c00);
  EXPECT_EQ(floatToHalf(-INFINITY), 0xfc00);
  EXPECT_TRUE(std::isnan(halfToFloat(floatToHalf(NAN))));
  EXPECT_EQ(floatToHalf(70000.0f), 0x7c00);         // overflow
  EXPECT_EQ(floatToFp8e4m3(1000.0f) & 0x7f, 0x7f);  // E4M3 has no infinity: NaN
  EXPECT_EQ(floatToFp8e5m2(1e6f), 0x7c);            // E5M2 overflows to infinity
  EXPECT_EQ(floatToBf16(1.0f), 0x3f80);
}

// The kernel against a per-element reference in double, for every type and op.
TEST(Reduce, EveryTypeAndOp) {
  const size_t n = 1003;  // odd: exercises the vector loops' tails
  std::mt19937 rng(7);
  for (int t = 0; t < myrNumTypes; ++t) {
    auto type = static_cast<myrDataType_t>(t);
    size_t es = dtypeSize(type);
    ASSERT_EQ(es, test::dataTypeSize(type));
    for (int o = 0; o < myrNumOps; ++o) {
      auto op = static_cast<myrRedOp_t>(o);
      std::vector<uint8_t> a(n * es), b(n * es), out(n * es);
      for (size_t i = 0; i < n; ++i) {
        bool sgn = test::isSignedType(type);
        test::storeValue(a.data(), i, type, static_cast<int>(rng() % 7) - (sgn ? 3 : 0));
        test::storeValue(b.data(), i, type, static_cast<int>(rng() % 7) - (sgn ? 3 : 0));
      }
      reduce(out.data(), a.data(), b.data(), n, type, op);
      for (size_t i = 0; i < n; ++i) {
        double x = test::loadValue(a.data(), i, type), y = test::loadValue(b.data(), i, type);
        double want = op == myrProd ? x * y : op == myrMax ? std::max(x, y) : op == myrMin ? std::min(x, y) : x + y;
        ASSERT_EQ(test::loadValue(out.data(), i, type), test::roundToType(want, type))
            << dtypeName(type) << " " << opName(op) << " at " << i;
      }
      // In place (dst aliases a) gives the same result.
      reduce(a.data(), a.data(), b.data(), n, type, op);
      ASSERT_EQ(a, out) << dtypeName(type) << " " << opName(op) << " in place";
    }
  }
}

TEST(Reduce, AvgDividesAtTheEnd) {
  std::vector<int32_t> v{7, -7, 9};
  scaleAvg(v.data(), v.size(), myrInt32, 2);
  EXPECT_EQ(v, (std::vector<int32_t>{3, -3, 4}));  // truncating division
  std::vector<double> d{1.0, 3.0};
  scaleAvg(d.data(), d.size(), myrFloat64, 4);
  EXPECT_EQ(d, (std::vector<double>{0.25, 0.75}));
}

// The rank count does not fit the element type: int8 with 128+ ranks, uint8 with 256 (was a division by zero).
TEST(Reduce, AvgOfNarrowIntegersOverManyRanks) {
  std::vector<int8_t> s{127, -128, 100};
  scaleAvg(s.data(), s.size(), myrInt8, 1024);
  EXPECT_EQ(s, (std::vector<int8_t>{0, 0, 0}));
  s = {127, -128, 100};
  scaleAvg(s.data(), s.size(), myrInt8, 100);
  EXPECT_EQ(s, (std::vector<int8_t>{1, -1, 1}));
  s = {127, -128, 100};
  scaleAvg(s.data(), s.size(), myrInt8, 200);  // not a negative divisor
  EXPECT_EQ(s, (std::vector<int8_t>{0, 0, 0}));
  std::vector<uint8_t> u{255, 7};
  scaleAvg(u.data(), u.size(), myrUint8, 256);
  EXPECT_EQ(u, (std::vector<uint8_t>{0, 0}));
  u = {255, 7};
  scaleAvg(u.data(), u.size(), myrUint8, 2);
  EXPECT_EQ(u, (std::vector<uint8_t>{127, 3}));
}

}  // namespace
}  // namespace myriad
