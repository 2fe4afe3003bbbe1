// Names of data types and operators, as logs, errors and benchmarks print them.
#include "plan/dtype.h"

namespace myriad {

const char* dtypeName(myrDataType_t d) {
  static const char* kNames[] = {"int8", "uint8", "int32",  "uint32",   "int64",   "uint64",
                                 "half", "float", "double", "bfloat16", "fp8e4m3", "fp8e5m2"};
  return validDtype(d) ? kNames[d] : "unknown";
}

const char* opName(myrRedOp_t o) {
  static const char* kNames[] = {"sum", "prod", "max", "min", "avg"};
  return validOp(o) ? kNames[o] : "unknown";
}

}  // namespace myriad
