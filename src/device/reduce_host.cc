// TEMPORARY (host-device branch): forwards to the host executor's kernels until the shared __host__ __device__
// reduction functors land in src/device and replace this file. It is the one file of src/device that includes
// exec/ (scripts/check-layers lists it as the single exception); delete that exception with this file.
#include "device/reduce_host.h"

#include "exec/reduce.h"

namespace myriad {

void deviceReduceOnHost(void* dst, const void* a, const void* b, size_t count, myrDataType_t dtype, myrRedOp_t op) {
  reduce(dst, a, b, count, dtype, op);
}

void deviceScaleAvgOnHost(void* buf, size_t count, myrDataType_t dtype, int n) {
  scaleAvg(buf, count, dtype, n);
}

}  // namespace myriad
