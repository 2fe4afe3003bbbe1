// Host reduction kernels. Each (type, op) pair is one simple loop over restrict-free but alias-safe
// element-wise code that GCC vectorises at -O3 (verified with -fopt-info-vec); the entry points are built
// for AVX2 and baseline x86-64 and picked at load time (target_clones).
#include "exec/reduce.h"

#include <cstdint>
#include <type_traits>

#include "exec/float_formats.h"

// The clones are chosen by an ifunc resolver that the dynamic loader runs while relocating, before the
// ThreadSanitizer runtime has started; instrumented, it crashes there. A TSan build has the baseline only, as
// has a clang build (the fuzz targets), which cannot combine target_clones with flatten.
#if defined(__SANITIZE_THREAD__) || defined(__clang__)
#define MYR_CLONES flatten
#else
#define MYR_CLONES target_clones("avx2", "default"), flatten
#endif

namespace myriad {
namespace {

struct Sum {
  template <typename T>
  static T apply(T a, T b) {
    if constexpr (std::is_integral_v<T>) {
      using U = std::make_unsigned_t<T>;
      return static_cast<T>(static_cast<U>(a) + static_cast<U>(b));  // wraps, no UB
    } else {
      return a + b;
    }
  }
};
struct Prod {
  template <typename T>
  static T apply(T a, T b) {
    if constexpr (std::is_integral_v<T>) {
      using U = std::conditional_t<sizeof(T) < sizeof(unsigned), unsigned, std::make_unsigned_t<T>>;
      return static_cast<T>(static_cast<U>(a) * static_cast<U>(b));
    } else {
      return a * b;
    }
  }
};
struct Max {
  template <typename T>
  static T apply(T a, T b) {
    return a > b ? a : b;
  }
};
struct Min {
  template <typename T>
  static T apply(T a, T b) {
    return a < b ? a : b;
  }
};

template <typename T, typename Op>
void loop(T* dst, const T* a, const T* b, size_t n) {
  for (size_t i = 0; i < n; ++i) dst[i] = Op::apply(a[i], b[i]);
}

// A narrow float type: storage S, widened to float with W, narrowed with N.
template <typename S, float (*W)(S), S (*N)(float), typename Op>
void narrowLoop(S* dst, const S* a, const S* b, size_t n) {
  for (size_t i = 0; i < n; ++i) dst[i] = N(Op::apply(W(a[i]), W(b[i])));
}

template <typename T, typename F>
void dispatchOp(myrRedOp_t op, F&& f) {
  switch (op) {
    case myrSum:
    case myrAvg: return f(Sum{});
    case myrProd: return f(Prod{});
    case myrMax: return f(Max{});
    case myrMin: return f(Min{});
    default: return;
  }
}

template <typename T>
void plain(void* dst, const void* a, const void* b, size_t n, myrRedOp_t op) {
  dispatchOp<T>(op, [&](auto o) {
    loop<T, decltype(o)>(static_cast<T*>(dst), static_cast<const T*>(a), static_cast<const T*>(b), n);
  });
}

template <typename S, float (*W)(S), S (*N)(float)>
void narrow(void* dst, const void* a, const void* b, size_t n, myrRedOp_t op) {
  dispatchOp<S>(op, [&](auto o) {
    narrowLoop<S, W, N, decltype(o)>(static_cast<S*>(dst), static_cast<const S*>(a), static_cast<const S*>(b), n);
  });
}

template <typename T>
void divideLoop(T* buf, size_t n, int d) {
  if constexpr (std::is_integral_v<T>) {
    // In a 64-bit type: the rank count may not fit T (int8 with 128 ranks or more, uint8 with 256).
    using W = std::conditional_t<std::is_signed_v<T>, int64_t, uint64_t>;
    const W wd = static_cast<W>(d);
    for (size_t i = 0; i < n; ++i) buf[i] = static_cast<T>(static_cast<W>(buf[i]) / wd);
  } else {
    for (size_t i = 0; i < n; ++i) buf[i] = buf[i] / static_cast<T>(d);
  }
}

template <typename S, float (*W)(S), S (*N)(float)>
void divideNarrow(S* buf, size_t n, int d) {
  const float fd = static_cast<float>(d);
  for (size_t i = 0; i < n; ++i) buf[i] = N(W(buf[i]) / fd);
}

}  // namespace

// flatten: the loops must be inlined into each clone, or they would be compiled for the baseline only.
__attribute__((MYR_CLONES)) void reduce(void* dst, const void* a, const void* b, size_t count, myrDataType_t dtype,
                                        myrRedOp_t op) {
  switch (dtype) {
    case myrInt8: return plain<int8_t>(dst, a, b, count, op);
    case myrUint8: return plain<uint8_t>(dst, a, b, count, op);
    case myrInt32: return plain<int32_t>(dst, a, b, count, op);
    case myrUint32: return plain<uint32_t>(dst, a, b, count, op);
    case myrInt64: return plain<int64_t>(dst, a, b, count, op);
    case myrUint64: return plain<uint64_t>(dst, a, b, count, op);
    case myrFloat32: return plain<float>(dst, a, b, count, op);
    case myrFloat64: return plain<double>(dst, a, b, count, op);
    case myrFloat16: return narrow<uint16_t, halfToFloat, floatToHalf>(dst, a, b, count, op);
    case myrBfloat16: return narrow<uint16_t, bf16ToFloat, floatToBf16>(dst, a, b, count, op);
    case myrFloat8e4m3: return narrow<uint8_t, fp8e4m3ToFloat, floatToFp8e4m3>(dst, a, b, count, op);
    case myrFloat8e5m2: return narrow<uint8_t, fp8e5m2ToFloat, floatToFp8e5m2>(dst, a, b, count, op);
    default: return;
  }
}

// flatten: the loops must be inlined into each clone, or they would be compiled for the baseline only.
__attribute__((MYR_CLONES)) void scaleAvg(void* buf, size_t count, myrDataType_t dtype, int n) {
  switch (dtype) {
    case myrInt8: return divideLoop(static_cast<int8_t*>(buf), count, n);
    case myrUint8: return divideLoop(static_cast<uint8_t*>(buf), count, n);
    case myrInt32: return divideLoop(static_cast<int32_t*>(buf), count, n);
    case myrUint32: return divideLoop(static_cast<uint32_t*>(buf), count, n);
    case myrInt64: return divideLoop(static_cast<int64_t*>(buf), count, n);
    case myrUint64: return divideLoop(static_cast<uint64_t*>(buf), count, n);
    case myrFloat32: return divideLoop(static_cast<float*>(buf), count, n);
    case myrFloat64: return divideLoop(static_cast<double*>(buf), count, n);
    case myrFloat16: return divideNarrow<uint16_t, halfToFloat, floatToHalf>(static_cast<uint16_t*>(buf), count, n);
    case myrBfloat16: return divideNarrow<uint16_t, bf16ToFloat, floatToBf16>(static_cast<uint16_t*>(buf), count, n);
    case myrFloat8e4m3:
      return divideNarrow<uint8_t, fp8e4m3ToFloat, floatToFp8e4m3>(static_cast<uint8_t*>(buf), count, n);
    case myrFloat8e5m2:
      return divideNarrow<uint8_t, fp8e5m2ToFloat, floatToFp8e5m2>(static_cast<uint8_t*>(buf), count, n);
    default: return;
  }
}

}  // namespace myriad
