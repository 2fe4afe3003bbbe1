// The narrow floating formats (IEEE binary16, bfloat16, OCP fp8 E4M3 and E5M2) as __host__ __device__ code,
// for the reduction functors that run both in CUDA kernels and on the CPU (reduce_op.h). Every conversion is
// bit-identical to the host kernels' (src/exec/float_formats.h): round to nearest, ties to even; fp8 overflow
// gives NaN (E4M3) or infinity (E5M2); a NaN input keeps its sign (bf16: its payload too), and a decoded fp8
// NaN is the positive quiet NaN 0x7fc00000, as the host's decoding table holds it.
#pragma once

#include <cstdint>
#include <cstring>

#if defined(__CUDACC__)
#define MYR_HD __host__ __device__
#else
#define MYR_HD
#endif

namespace myriad::dev {

MYR_HD inline uint32_t floatBits(float f) {
#if defined(__CUDA_ARCH__)
  return __float_as_uint(f);
#else
  uint32_t u;
  std::memcpy(&u, &f, 4);
  return u;
#endif
}

MYR_HD inline float bitsFloat(uint32_t u) {
#if defined(__CUDA_ARCH__)
  return __uint_as_float(u);
#else
  float f;
  std::memcpy(&f, &u, 4);
  return f;
#endif
}

inline constexpr uint32_t kQuietNan = 0x7fc00000u;

// ---- binary16 ----

MYR_HD inline float halfToFloat(uint16_t h) {
  uint32_t sign = static_cast<uint32_t>(h & 0x8000) << 16;
  uint32_t em = h & 0x7fff;
  // Exponent and mantissa moved into float position and scaled by 2^112: the exponent is rebased (bias
  // 15 -> 127) and half subnormals become float normals in one exact multiply.
  float scaled = bitsFloat(em << 13) * 0x1p112f;
  uint32_t bits = em >= 0x7c00 ? ((em << 13) | 0x7f800000u) : floatBits(scaled);
  return bitsFloat(bits | sign);
}

MYR_HD inline uint16_t floatToHalf(float f) {
  uint32_t x = floatBits(f);
  uint32_t sign = (x >> 16) & 0x8000;
  uint32_t a = x & 0x7fffffff;
  // Normal results: 13 mantissa bits dropped with round-to-nearest-even while the exponent is rebased.
  uint32_t normal = (a + 0xc8000fffu + ((a >> 13) & 1)) >> 13;
  // Subnormal results: adding 0.5 aligns the mantissa so that the FPU rounds.
  uint32_t sub = floatBits(bitsFloat(a) + 0.5f) - floatBits(0.5f);
  uint32_t inf = a > 0x7f800000u ? 0x7e00u : 0x7c00u;
  uint32_t r = a >= 0x47800000u ? inf : (a < 0x38800000u ? sub : normal);
  return static_cast<uint16_t>(r | sign);
}

// ---- bfloat16 ----

MYR_HD inline float bf16ToFloat(uint16_t b) {
  return bitsFloat(static_cast<uint32_t>(b) << 16);
}

MYR_HD inline uint16_t floatToBf16(float f) {
  uint32_t x = floatBits(f);
  uint32_t rounded = (x + 0x7fffu + ((x >> 16) & 1)) >> 16;
  uint32_t nan = (x >> 16) | 0x40;
  return static_cast<uint16_t>((x & 0x7fffffff) > 0x7f800000u ? nan : rounded);
}

// ---- fp8 ----
// ManBits mantissa bits, exponent bias Bias; HasInf: E5M2 (exponent all ones is inf/NaN, max 57344), else
// E4M3 (only S.1111.111 is NaN, max 448).
template <int ManBits, int Bias, bool HasInf>
struct Fp8 {
  MYR_HD static float decode(uint8_t v) {
    constexpr int kExpMax = (1 << (7 - ManBits)) - 1;
    constexpr uint32_t kManMask = (1u << ManBits) - 1;
    uint32_t sign = static_cast<uint32_t>(v & 0x80) << 24;
    uint32_t e = (v >> ManBits) & kExpMax;
    uint32_t m = v & kManMask;
    if (HasInf && e == kExpMax) return bitsFloat(m ? kQuietNan : (sign | 0x7f800000u));
    if (!HasInf && e == kExpMax && m == kManMask) return bitsFloat(kQuietNan);
    if (e == 0) {
      // m * 2^(1 - Bias - ManBits): a float normal (or zero), exact.
      constexpr float kQuantum = static_cast<float>(1.0 / (1ull << (Bias - 1 + ManBits)));
      return bitsFloat(sign | floatBits(static_cast<float>(m) * kQuantum));
    }
    return bitsFloat(sign | ((e - Bias + 127) << 23) | (m << (23 - ManBits)));
  }

  // Normal results drop mantissa bits with integer rounding and rebase the exponent; subnormal results let
  // the FPU round by adding a power of two whose ulp is the format's subnormal quantum.
  MYR_HD static uint8_t encode(float x) {
    uint32_t bits = floatBits(x);
    uint8_t sign = static_cast<uint8_t>((bits >> 24) & 0x80);
    uint32_t a = bits & 0x7fffffff;
    constexpr uint8_t kNan = 0x7f;  // a NaN in both formats
    constexpr uint8_t kOverflow = HasInf ? 0x7c : kNan;
    constexpr uint8_t kMaxCode = HasInf ? 0x7b : 0x7e;
    if (a > 0x7f800000u) return sign | kNan;
    if (a == 0x7f800000u) return sign | kOverflow;
    constexpr int kDrop = 23 - ManBits;
    constexpr uint32_t kMinNormal = static_cast<uint32_t>(127 + 1 - Bias) << 23;
    uint32_t r;
    if (a < kMinNormal) {
      float magic = bitsFloat(static_cast<uint32_t>(127 + 1 - Bias - ManBits + 23) << 23);
      r = floatBits(bitsFloat(a) + magic) - floatBits(magic);
    } else {
      constexpr uint32_t kRebase = static_cast<uint32_t>(Bias - 127) << 23;  // wraps: subtracts the difference
      r = (a + kRebase + ((1u << (kDrop - 1)) - 1) + ((a >> kDrop) & 1)) >> kDrop;
    }
    return r > kMaxCode ? sign | kOverflow : sign | static_cast<uint8_t>(r);
  }
};
using Fp8E4M3 = Fp8<3, 7, false>;
using Fp8E5M2 = Fp8<2, 15, true>;

MYR_HD inline float fp8e4m3ToFloat(uint8_t v) {
  return Fp8E4M3::decode(v);
}
MYR_HD inline float fp8e5m2ToFloat(uint8_t v) {
  return Fp8E5M2::decode(v);
}
MYR_HD inline uint8_t floatToFp8e4m3(float f) {
  return Fp8E4M3::encode(f);
}
MYR_HD inline uint8_t floatToFp8e5m2(float f) {
  return Fp8E5M2::encode(f);
}

}  // namespace myriad::dev
