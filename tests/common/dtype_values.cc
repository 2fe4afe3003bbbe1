// Element encodings on the host: integers by two's-complement wrap, IEEE-like minifloats (fp16, bf16,
// fp8) by one generic encoder parameterised by exponent and mantissa widths. e4m3 is the OCP "FN" variant:
// no infinities, S.1111.111 is NaN, so out-of-range values saturate to ±448 here.
#include "tests/common/dtype_values.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>

namespace myriad::test {
namespace {

struct MiniFloat {
  int expBits;
  int manBits;
  bool hasInf;  // IEEE-style all-ones exponent; false: OCP FN (only S.1..1.1..1 is NaN)
};

constexpr MiniFloat kHalf{5, 10, true};
constexpr MiniFloat kBf16{8, 7, true};
constexpr MiniFloat kE4m3{4, 3, false};
constexpr MiniFloat kE5m2{5, 2, true};

const MiniFloat* miniFloatOf(myrDataType_t type) {
  switch (type) {
    case myrFloat16: return &kHalf;
    case myrBfloat16: return &kBf16;
    case myrFloat8e4m3: return &kE4m3;
    case myrFloat8e5m2: return &kE5m2;
    default: return nullptr;
  }
}

double maxFinite(const MiniFloat& f) {
  const int bias = (1 << (f.expBits - 1)) - 1;
  const int expMax = (1 << f.expBits) - 1;
  if (f.hasInf) return std::ldexp(2.0 - std::ldexp(1.0, -f.manBits), expMax - 1 - bias);
  return std::ldexp(2.0 - std::ldexp(1.0, 1 - f.manBits), expMax - bias);
}

uint32_t encodeMini(double v, const MiniFloat& f) {
  const int bias = (1 << (f.expBits - 1)) - 1;
  const uint32_t expMax = (1u << f.expBits) - 1;
  const uint32_t manMask = (1u << f.manBits) - 1;
  const uint32_t sign = std::signbit(v) ? 1u << (f.expBits + f.manBits) : 0u;
  const uint32_t saturated = f.hasInf ? sign | (expMax << f.manBits)  // infinity
                                      : sign | (expMax << f.manBits) | (manMask - 1);
  if (std::isnan(v)) return sign | (expMax << f.manBits) | manMask;
  const double a = std::fabs(v);
  if (a == 0) return sign;
  if (std::isinf(a)) return saturated;
  const int minNormalExp = 1 - bias;
  int e2 = 0;
  std::frexp(a, &e2);
  // Quantum of the binade a falls in (subnormals share the smallest normal binade's quantum).
  const int quantumExp = std::max(e2 - 1, minNormalExp) - f.manBits;
  const double steps = std::nearbyint(std::ldexp(a, -quantumExp));  // default mode: half to even
  const double r = std::ldexp(steps, quantumExp);
  if (r > maxFinite(f)) return saturated;
  if (r < std::ldexp(1.0, minNormalExp)) return sign | static_cast<uint32_t>(steps);
  std::frexp(r, &e2);
  const int exponent = e2 - 1;
  const auto mantissa = static_cast<uint32_t>(std::ldexp(r, f.manBits - exponent)) - (1u << f.manBits);
  return sign | (static_cast<uint32_t>(exponent + bias) << f.manBits) | mantissa;
}

double decodeMini(uint32_t bits, const MiniFloat& f) {
  const int bias = (1 << (f.expBits - 1)) - 1;
  const uint32_t expMax = (1u << f.expBits) - 1;
  const uint32_t manMask = (1u << f.manBits) - 1;
  const bool negative = (bits >> (f.expBits + f.manBits)) & 1u;
  const uint32_t field = (bits >> f.manBits) & expMax;
  const uint32_t mantissa = bits & manMask;
  double value;
  if (field == expMax && f.hasInf) {
    value = mantissa == 0 ? INFINITY : NAN;
  } else if (field == expMax && mantissa == manMask) {
    value = NAN;
  } else if (field == 0) {
    value = std::ldexp(static_cast<double>(mantissa), 1 - bias - f.manBits);
  } else {
    value = std::ldexp(static_cast<double>((1u << f.manBits) + mantissa), static_cast<int>(field) - bias - f.manBits);
  }
  return negative ? -value : value;
}

// Doubles to integers: truncate toward zero, then wrap modulo 2^bits (defined behaviour in C++20).
int64_t toInt64(double v) {
  if (std::isnan(v)) return 0;
  if (v >= 9.2e18) return INT64_MAX;
  if (v <= -9.2e18) return INT64_MIN;
  return static_cast<int64_t>(v);
}

uint64_t toUint64(double v) {
  if (v >= 1.8e19) return UINT64_MAX;
  if (v < 0) return static_cast<uint64_t>(toInt64(v));
  return std::isnan(v) ? 0 : static_cast<uint64_t>(v);
}

template <typename T>
void put(void* buffer, size_t index, T value) {
  std::memcpy(static_cast<char*>(buffer) + index * sizeof(T), &value, sizeof(T));
}

template <typename T>
T get(const void* buffer, size_t index) {
  T value;
  std::memcpy(&value, static_cast<const char*>(buffer) + index * sizeof(T), sizeof(T));
  return value;
}

}  // namespace

size_t dataTypeSize(myrDataType_t type) {
  switch (type) {
    case myrInt8:
    case myrUint8:
    case myrFloat8e4m3:
    case myrFloat8e5m2: return 1;
    case myrFloat16:
    case myrBfloat16: return 2;
    case myrInt32:
    case myrUint32:
    case myrFloat32: return 4;
    case myrInt64:
    case myrUint64:
    case myrFloat64: return 8;
    default: return 0;
  }
}

const char* dataTypeName(myrDataType_t type) {
  static const char* const kNames[kNumDataTypes] = {"int8", "uint8", "int32",  "uint32",   "int64",  "uint64",
                                                    "half", "float", "double", "bfloat16", "f8e4m3", "f8e5m2"};
  const int i = static_cast<int>(type);
  return i >= 0 && i < kNumDataTypes ? kNames[i] : "?";
}

const char* redOpName(myrRedOp_t op) {
  static const char* const kNames[kNumRedOps] = {"sum", "prod", "max", "min", "avg"};
  const int i = static_cast<int>(op);
  return i >= 0 && i < kNumRedOps ? kNames[i] : "?";
}

bool isFloatType(myrDataType_t type) {
  return type == myrFloat16 || type == myrFloat32 || type == myrFloat64 || type == myrBfloat16 ||
         type == myrFloat8e4m3 || type == myrFloat8e5m2;
}

bool isSignedType(myrDataType_t type) {
  return isFloatType(type) || type == myrInt8 || type == myrInt32 || type == myrInt64;
}

double exactIntegerLimit(myrDataType_t type) {
  switch (type) {
    case myrInt8: return 127;
    case myrUint8: return 255;
    case myrInt32: return 2147483647.0;
    case myrUint32: return 4294967295.0;
    case myrInt64:
    case myrUint64: return 9007199254740992.0;  // what a double holds exactly
    case myrFloat16: return 2048;
    case myrFloat32: return 16777216.0;
    case myrFloat64: return 9007199254740992.0;
    case myrBfloat16: return 256;
    case myrFloat8e4m3: return 16;
    case myrFloat8e5m2: return 8;
    default: return 0;
  }
}

double typeEpsilon(myrDataType_t type) {
  if (const MiniFloat* f = miniFloatOf(type)) return std::ldexp(1.0, -f->manBits);
  if (type == myrFloat32) return std::ldexp(1.0, -23);
  if (type == myrFloat64) return std::ldexp(1.0, -52);
  return 0;
}

int mantissaBits(myrDataType_t type) {
  if (const MiniFloat* f = miniFloatOf(type)) return f->manBits;
  if (type == myrFloat32) return 23;
  if (type == myrFloat64) return 52;
  return 0;
}

double ulpOf(double value, myrDataType_t type) {
  int minNormalExp = -1022;
  if (const MiniFloat* f = miniFloatOf(type)) minNormalExp = 2 - (1 << (f->expBits - 1));
  if (type == myrFloat32) minNormalExp = -126;
  if (!isFloatType(type)) return 0;
  int e2 = 0;
  std::frexp(value, &e2);  // |value| in [2^(e2-1), 2^e2); e2 = 0 for value 0
  const int exponent = value == 0 ? minNormalExp : std::max(e2 - 1, minNormalExp);
  return std::ldexp(1.0, exponent - mantissaBits(type));
}

void storeValue(void* buffer, size_t index, myrDataType_t type, double value) {
  switch (type) {
    case myrInt8: put(buffer, index, static_cast<int8_t>(toInt64(value))); return;
    case myrUint8: put(buffer, index, static_cast<uint8_t>(toUint64(value))); return;
    case myrInt32: put(buffer, index, static_cast<int32_t>(toInt64(value))); return;
    case myrUint32: put(buffer, index, static_cast<uint32_t>(toUint64(value))); return;
    case myrInt64: put(buffer, index, toInt64(value)); return;
    case myrUint64: put(buffer, index, toUint64(value)); return;
    case myrFloat32: put(buffer, index, static_cast<float>(value)); return;
    case myrFloat64: put(buffer, index, value); return;
    case myrFloat16:
    case myrBfloat16: put(buffer, index, static_cast<uint16_t>(encodeMini(value, *miniFloatOf(type)))); return;
    case myrFloat8e4m3:
    case myrFloat8e5m2: put(buffer, index, static_cast<uint8_t>(encodeMini(value, *miniFloatOf(type)))); return;
    default: return;
  }
}

double loadValue(const void* buffer, size_t index, myrDataType_t type) {
  switch (type) {
    case myrInt8: return get<int8_t>(buffer, index);
    case myrUint8: return get<uint8_t>(buffer, index);
    case myrInt32: return get<int32_t>(buffer, index);
    case myrUint32: return get<uint32_t>(buffer, index);
    case myrInt64: return static_cast<double>(get<int64_t>(buffer, index));
    case myrUint64: return static_cast<double>(get<uint64_t>(buffer, index));
    case myrFloat32: return get<float>(buffer, index);
    case myrFloat64: return get<double>(buffer, index);
    case myrFloat16:
    case myrBfloat16: return decodeMini(get<uint16_t>(buffer, index), *miniFloatOf(type));
    case myrFloat8e4m3:
    case myrFloat8e5m2: return decodeMini(get<uint8_t>(buffer, index), *miniFloatOf(type));
    default: return NAN;
  }
}

double roundToType(double value, myrDataType_t type) {
  unsigned char scratch[8] = {};
  storeValue(scratch, 0, type, value);
  return loadValue(scratch, 0, type);
}

}  // namespace myriad::test
