// Element types and reduction operators: validation, sizes and names (the C enums are the vocabulary).
#pragma once

#include <cstddef>

#include "base/status.h"
#include "myriad/myriad.h"

namespace myriad {

inline bool validDtype(int d) {
  return d >= 0 && d < myrNumTypes;
}
inline bool validOp(int o) {
  return o >= 0 && o < myrNumOps;
}

inline size_t dtypeSize(myrDataType_t d) {
  switch (d) {
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

const char* dtypeName(myrDataType_t d);
const char* opName(myrRedOp_t o);

}  // namespace myriad
