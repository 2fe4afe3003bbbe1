// The reduction kernels' host side: the exact arithmetic the device kernels run, callable on the CPU (the
// host-backed device runs its reduce and scaleAvg operations through these). dst may alias a or b; myrAvg
// reduces as a sum and deviceScaleAvgOnHost divides once at the end.
#pragma once

#include <cstddef>

#include "myriad/myriad.h"

namespace myriad {

void deviceReduceOnHost(void* dst, const void* a, const void* b, size_t count, myrDataType_t dtype, myrRedOp_t op);
void deviceScaleAvgOnHost(void* buf, size_t count, myrDataType_t dtype, int n);

}  // namespace myriad
