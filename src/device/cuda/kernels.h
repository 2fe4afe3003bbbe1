// The CUDA reduction kernels (kernels.cu): dst = a op b and buf /= n for every dtype and operator, enqueued on
// a stream. Plain C++ may include this header: it needs only the runtime's types (driver_types.h), not the
// runtime API or nvcc. cudaError_t cannot be forward-declared (an enum without a fixed underlying type).
#pragma once

#include <driver_types.h>

#include <cstddef>

#include "myriad/myriad.h"

namespace myriad {

// dst[i] = a[i] op b[i] for i < count, on `stream`; dst may alias a or b; myrAvg reduces as a sum. Returns the
// launch's error (cudaErrorInvalidValue for a dtype or op outside the enums); count 0 launches nothing.
cudaError_t launchReduce(cudaStream_t stream, void* dst, const void* a, const void* b, size_t count,
                         myrDataType_t dtype, myrRedOp_t op);
// buf[i] /= n (integers: truncating), on `stream`.
cudaError_t launchScaleAvg(cudaStream_t stream, void* buf, size_t count, myrDataType_t dtype, int n);

}  // namespace myriad
