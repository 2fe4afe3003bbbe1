// The device functors over host memory: one plain loop per (dtype, op), which GCC vectorises like the host
// kernels' (no target_clones here: the host-backed device is a test device, not the data path).
#include "device/reduce_host.h"

#include "device/reduce_op.h"

namespace myriad {

void deviceReduceOnHost(void* dst, const void* a, const void* b, size_t count, myrDataType_t dtype, myrRedOp_t op) {
  dev::dispatchDType(dtype, [&](auto tag) {
    constexpr myrDataType_t kD = decltype(tag)::value;
    using S = typename dev::DType<kD>::Storage;
    dev::dispatchOp(op, [&](auto o) {
      auto* out = static_cast<S*>(dst);
      const auto* x = static_cast<const S*>(a);
      const auto* y = static_cast<const S*>(b);
      for (size_t i = 0; i < count; ++i) out[i] = dev::reduceElem<kD, decltype(o)>(x[i], y[i]);
    });
  });
}

void deviceScaleAvgOnHost(void* buf, size_t count, myrDataType_t dtype, int n) {
  dev::dispatchDType(dtype, [&](auto tag) {
    constexpr myrDataType_t kD = decltype(tag)::value;
    using S = typename dev::DType<kD>::Storage;
    auto* p = static_cast<S*>(buf);
    for (size_t i = 0; i < count; ++i) p[i] = dev::scaleElem<kD>(p[i], n);
  });
}

}  // namespace myriad
