// The device reduction functors (reduce_op.h) run on the CPU: the host-backed device's kernels. Same
// arithmetic as a CUDA kernel, so a test on the host-backed device checks what a GPU computes.
#pragma once

#include <cstddef>

#include "myriad/myriad.h"

namespace myriad {

// dst[i] = a[i] op b[i] for i < count; dst may alias a or b; myrAvg reduces as a sum.
void deviceReduceOnHost(void* dst, const void* a, const void* b, size_t count, myrDataType_t dtype, myrRedOp_t op);
// buf[i] /= n (integers: truncating).
void deviceScaleAvgOnHost(void* buf, size_t count, myrDataType_t dtype, int n);

}  // namespace myriad
