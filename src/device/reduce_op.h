// The reduction arithmetic of the devices, written once as __host__ __device__ code: CUDA kernels
// (cuda/kernels.cu) and the host-backed device (reduce_host.cc) run these same functors, so CI tests on the
// CPU the arithmetic a GPU runs. Results are bit-identical to the host kernels (src/exec/reduce.cc) on the
// CPU; on a GPU too, except the sign and payload of a NaN that the arithmetic itself creates (a GPU returns
// its canonical NaN where x86 returns its own), which narrow formats that keep a NaN's sign then show.
// Integers wrap (sum, prod); narrow floats are widened to float, combined, and rounded back once.
#pragma once

#include <cstdint>
#include <type_traits>

#include "device/narrow_float.h"
#include "myriad/myriad.h"

namespace myriad::dev {

// ---- element types: storage in memory, the type the operator computes in, and the conversions ----

template <typename T>
struct Plain {
  using Storage = T;
  using Compute = T;
  MYR_HD static T load(T v) { return v; }
  MYR_HD static T store(T v) { return v; }
};

template <myrDataType_t D>
struct DType;
template <>
struct DType<myrInt8> : Plain<int8_t> {};
template <>
struct DType<myrUint8> : Plain<uint8_t> {};
template <>
struct DType<myrInt32> : Plain<int32_t> {};
template <>
struct DType<myrUint32> : Plain<uint32_t> {};
template <>
struct DType<myrInt64> : Plain<int64_t> {};
template <>
struct DType<myrUint64> : Plain<uint64_t> {};
template <>
struct DType<myrFloat32> : Plain<float> {};
template <>
struct DType<myrFloat64> : Plain<double> {};
// Narrow floats compute in float.
template <>
struct DType<myrFloat16> {
  using Storage = uint16_t;
  using Compute = float;
  MYR_HD static float load(uint16_t v) { return halfToFloat(v); }
  MYR_HD static uint16_t store(float v) { return floatToHalf(v); }
};
template <>
struct DType<myrBfloat16> {
  using Storage = uint16_t;
  using Compute = float;
  MYR_HD static float load(uint16_t v) { return bf16ToFloat(v); }
  MYR_HD static uint16_t store(float v) { return floatToBf16(v); }
};
template <>
struct DType<myrFloat8e4m3> {
  using Storage = uint8_t;
  using Compute = float;
  MYR_HD static float load(uint8_t v) { return fp8e4m3ToFloat(v); }
  MYR_HD static uint8_t store(float v) { return floatToFp8e4m3(v); }
};
template <>
struct DType<myrFloat8e5m2> {
  using Storage = uint8_t;
  using Compute = float;
  MYR_HD static float load(uint8_t v) { return fp8e5m2ToFloat(v); }
  MYR_HD static uint8_t store(float v) { return floatToFp8e5m2(v); }
};

// ---- operators (myrAvg reduces as OpSum) ----

struct OpSum {
  template <typename T>
  MYR_HD static T apply(T a, T b) {
    if constexpr (std::is_integral_v<T>) {
      using U = std::make_unsigned_t<T>;
      return static_cast<T>(static_cast<U>(a) + static_cast<U>(b));  // wraps, no UB
    } else {
      return a + b;
    }
  }
};
struct OpProd {
  template <typename T>
  MYR_HD static T apply(T a, T b) {
    if constexpr (std::is_integral_v<T>) {
      // int8 and uint8 would be promoted to int, whose overflow is UB: multiply as unsigned.
      using U = std::conditional_t<sizeof(T) < sizeof(unsigned), unsigned, std::make_unsigned_t<T>>;
      return static_cast<T>(static_cast<U>(a) * static_cast<U>(b));
    } else {
      return a * b;
    }
  }
};
// `a > b ? a : b`, as the host kernels: a NaN in b is returned, a NaN in a is not.
struct OpMax {
  template <typename T>
  MYR_HD static T apply(T a, T b) {
    return a > b ? a : b;
  }
};
struct OpMin {
  template <typename T>
  MYR_HD static T apply(T a, T b) {
    return a < b ? a : b;
  }
};

// ---- one element ----

template <myrDataType_t D, typename Op>
MYR_HD inline typename DType<D>::Storage reduceElem(typename DType<D>::Storage a, typename DType<D>::Storage b) {
  using T = DType<D>;
  return T::store(Op::apply(T::load(a), T::load(b)));
}

// v / n; integers divide in 64 bits (truncating): n may not fit the type (int8 with 128 ranks or more).
template <myrDataType_t D>
MYR_HD inline typename DType<D>::Storage scaleElem(typename DType<D>::Storage v, int n) {
  using T = DType<D>;
  using C = typename T::Compute;
  if constexpr (std::is_integral_v<C>) {
    using W = std::conditional_t<std::is_signed_v<C>, int64_t, uint64_t>;
    return static_cast<C>(static_cast<W>(v) / static_cast<W>(n));
  } else {
    return T::store(T::load(v) / static_cast<C>(n));
  }
}

// ---- host-side dispatch from the run-time (dtype, op) to a compile-time pair ----

template <myrDataType_t D>
using DTypeTag = std::integral_constant<myrDataType_t, D>;

// Calls f(DTypeTag<D>{}) for dtype; returns false for a value outside myrDataType_t.
template <typename F>
inline bool dispatchDType(myrDataType_t dtype, F&& f) {
  switch (dtype) {
    case myrInt8: f(DTypeTag<myrInt8>{}); return true;
    case myrUint8: f(DTypeTag<myrUint8>{}); return true;
    case myrInt32: f(DTypeTag<myrInt32>{}); return true;
    case myrUint32: f(DTypeTag<myrUint32>{}); return true;
    case myrInt64: f(DTypeTag<myrInt64>{}); return true;
    case myrUint64: f(DTypeTag<myrUint64>{}); return true;
    case myrFloat16: f(DTypeTag<myrFloat16>{}); return true;
    case myrFloat32: f(DTypeTag<myrFloat32>{}); return true;
    case myrFloat64: f(DTypeTag<myrFloat64>{}); return true;
    case myrBfloat16: f(DTypeTag<myrBfloat16>{}); return true;
    case myrFloat8e4m3: f(DTypeTag<myrFloat8e4m3>{}); return true;
    case myrFloat8e5m2: f(DTypeTag<myrFloat8e5m2>{}); return true;
    default: return false;
  }
}

// Calls f(Op{}) for op (myrAvg as OpSum); returns false for a value outside myrRedOp_t.
template <typename F>
inline bool dispatchOp(myrRedOp_t op, F&& f) {
  switch (op) {
    case myrSum:
    case myrAvg: f(OpSum{}); return true;
    case myrProd: f(OpProd{}); return true;
    case myrMax: f(OpMax{}); return true;
    case myrMin: f(OpMin{}); return true;
    default: return false;
  }
}

}  // namespace myriad::dev
