// Host-side knowledge of every myrDataType_t, written without the library: element sizes, names, and the
// conversion of doubles to and from each encoding (fp16, bf16, fp8 e4m3/e5m2 included).
// Invariant: storeValue rounds to nearest-even (integers wrap), so loadValue after storeValue gives exactly
// the value the library reads from the buffer.
#pragma once

#include <cstddef>

#include "myriad/myriad.h"

namespace myriad::test {

constexpr int kNumDataTypes = myrNumTypes;
constexpr int kNumRedOps = myrNumOps;

// Bytes of one element; 0 for a value outside the enum.
size_t dataTypeSize(myrDataType_t type);
// nccl-tests spelling: "int8", "float", "half", "bfloat16", "f8e4m3", ...; "?" outside the enum.
const char* dataTypeName(myrDataType_t type);
const char* redOpName(myrRedOp_t op);

bool isFloatType(myrDataType_t type);
bool isSignedType(myrDataType_t type);  // true for the float types too
// Every integer in [-limit, limit] is exactly representable (and does not wrap).
double exactIntegerLimit(myrDataType_t type);
// Distance from 1 to the next representable value (0 for integer types).
double typeEpsilon(myrDataType_t type);
// Significand bits after the point (fp16: 10, e5m2: 2); 0 for integer types.
int mantissaBits(myrDataType_t type);
// The spacing of representable values in the binade of |value| (subnormals: the smallest normal binade's);
// 0 for integer types.
double ulpOf(double value, myrDataType_t type);

void storeValue(void* buffer, size_t index, myrDataType_t type, double value);
double loadValue(const void* buffer, size_t index, myrDataType_t type);
// The value that storeValue followed by loadValue yields.
double roundToType(double value, myrDataType_t type);

}  // namespace myriad::test
