// fp8 conversions: decoding by a 256-entry table, encoding by integer rounding.
#include "exec/float_formats.h"

#include <array>
#include <cmath>

namespace myriad {
namespace {

struct Fp8Format {
  int manBits;
  int bias;
  bool hasInf;  // E5M2: exponent all ones is inf/NaN (max 57344); E4M3: only S.1111.111 is NaN (max 448)
};
constexpr Fp8Format kE4M3{3, 7, false};
constexpr Fp8Format kE5M2{2, 15, true};

float decode(uint8_t v, const Fp8Format& f) {
  int expBits = 7 - f.manBits;
  int expMax = (1 << expBits) - 1;
  int sign = v >> 7;
  int e = (v >> f.manBits) & expMax;
  int m = v & ((1 << f.manBits) - 1);
  float s = sign ? -1.0f : 1.0f;
  if (f.hasInf && e == expMax) return m ? NAN : s * INFINITY;
  if (!f.hasInf && e == expMax && m == (1 << f.manBits) - 1) return NAN;
  if (e == 0) return s * std::ldexp(static_cast<float>(m), 1 - f.bias - f.manBits);
  return s * std::ldexp(1.0f + static_cast<float>(m) / static_cast<float>(1 << f.manBits), e - f.bias);
}

// Rounds to nearest even with integer arithmetic, as floatToHalf does: normal results drop mantissa bits
// and rebase the exponent; subnormal results let the FPU round by adding a power of two whose ulp is the
// format's subnormal quantum.
uint8_t encode(float x, const Fp8Format& f) {
  uint32_t bits = floatBits(x);
  uint8_t sign = static_cast<uint8_t>((bits >> 24) & 0x80);
  uint32_t a = bits & 0x7fffffff;
  constexpr uint8_t kNan = 0x7f;  // a NaN in both formats
  uint8_t overflow = f.hasInf ? 0x7c : kNan;
  uint8_t maxCode = f.hasInf ? 0x7b : 0x7e;
  if (a > 0x7f800000u) return sign | kNan;
  if (a == 0x7f800000u) return sign | overflow;
  int drop = 23 - f.manBits;
  uint32_t minNormal = static_cast<uint32_t>(127 + 1 - f.bias) << 23;
  uint32_t r;
  if (a < minNormal) {
    float magic = bitsFloat(static_cast<uint32_t>(127 + 1 - f.bias - f.manBits + 23) << 23);
    r = floatBits(bitsFloat(a) + magic) - floatBits(magic);
  } else {
    uint32_t rebase = static_cast<uint32_t>(f.bias - 127) << 23;  // wraps: subtracts the bias difference
    r = (a + rebase + ((1u << (drop - 1)) - 1) + ((a >> drop) & 1)) >> drop;
  }
  return r > maxCode ? sign | overflow : sign | static_cast<uint8_t>(r);
}

template <const Fp8Format& F>
const std::array<float, 256>& table() {
  static const std::array<float, 256> t = [] {
    std::array<float, 256> a{};
    for (int i = 0; i < 256; ++i) a[i] = decode(static_cast<uint8_t>(i), F);
    return a;
  }();
  return t;
}

}  // namespace

float fp8e4m3ToFloat(uint8_t v) {
  return table<kE4M3>()[v];
}
float fp8e5m2ToFloat(uint8_t v) {
  return table<kE5M2>()[v];
}
uint8_t floatToFp8e4m3(float f) {
  return encode(f, kE4M3);
}
uint8_t floatToFp8e5m2(float f) {
  return encode(f, kE5M2);
}

}  // namespace myriad
