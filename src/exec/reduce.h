// Host reduction kernels for every data type and operator. dst may alias a or b. Narrow floats (fp16,
// bf16, fp8) are widened to float, combined, and rounded back; integers wrap (sum, prod) and are exact.
// myrAvg reduces as a sum; the caller divides once at the end with scaleAvg.
#pragma once

#include <cstddef>

#include "myriad/myriad.h"

namespace myriad {

// dst[i] = a[i] op b[i]
void reduce(void* dst, const void* a, const void* b, size_t count, myrDataType_t dtype, myrRedOp_t op);
// buf[i] = buf[i] / n (integers: truncating division)
void scaleAvg(void* buf, size_t count, myrDataType_t dtype, int n);

}  // namespace myriad
