// Conversions between float and the narrow floating formats (IEEE binary16, bfloat16, OCP fp8 E4M3 and
// E5M2). The 16-bit ones are branch-free integer code so that loops over them vectorise; rounding is to
// nearest, ties to even, everywhere. fp8 overflow gives NaN (E4M3, which has no infinity) or infinity
// (E5M2), the non-saturating behaviour of the OCP specification.
#pragma once

#include <cstdint>
#include <cstring>

namespace myriad {

inline uint32_t floatBits(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  return u;
}
inline float bitsFloat(uint32_t u) {
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}

inline float halfToFloat(uint16_t h) {
  uint32_t sign = static_cast<uint32_t>(h & 0x8000) << 16;
  uint32_t em = h & 0x7fff;
  // Shifting exponent and mantissa into float position and scaling by 2^112 rebases the exponent
  // (bias 15 -> 127) and turns half subnormals into float normals in one multiply.
  float scaled = bitsFloat(em << 13) * 0x1p112f;
  uint32_t bits = em >= 0x7c00 ? ((em << 13) | 0x7f800000u) : floatBits(scaled);
  return bitsFloat(bits | sign);
}

inline uint16_t floatToHalf(float f) {
  uint32_t x = floatBits(f);
  uint32_t sign = (x >> 16) & 0x8000;
  uint32_t a = x & 0x7fffffff;
  // Normal results: drop 13 mantissa bits with round-to-nearest-even, rebasing the exponent.
  uint32_t normal = (a + 0xc8000fffu + ((a >> 13) & 1)) >> 13;
  // Subnormal results: adding 0.5 aligns the mantissa so the FPU does the rounding.
  uint32_t sub = floatBits(bitsFloat(a) + 0.5f) - floatBits(0.5f);
  uint32_t inf = a > 0x7f800000u ? 0x7e00u : 0x7c00u;
  uint32_t r = a >= 0x47800000u ? inf : (a < 0x38800000u ? sub : normal);
  return static_cast<uint16_t>(r | sign);
}

inline float bf16ToFloat(uint16_t b) {
  return bitsFloat(static_cast<uint32_t>(b) << 16);
}

inline uint16_t floatToBf16(float f) {
  uint32_t x = floatBits(f);
  uint32_t rounded = (x + 0x7fffu + ((x >> 16) & 1)) >> 16;
  uint32_t nan = (x >> 16) | 0x40;
  return static_cast<uint16_t>((x & 0x7fffffff) > 0x7f800000u ? nan : rounded);
}

float fp8e4m3ToFloat(uint8_t v);
float fp8e5m2ToFloat(uint8_t v);
uint8_t floatToFp8e4m3(float f);
uint8_t floatToFp8e5m2(float f);

}  // namespace myriad
