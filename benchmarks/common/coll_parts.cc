// Shared table entries. blockCount follows nccl-tests' all_gather/reduce_scatter/alltoall.cu, which round
// each rank's block down to 16 bytes, so the size column (the whole buffer) can be below -b's value.
#include "benchmarks/common/coll_parts.h"

#include "tests/common/dtype_values.h"
#include "tests/common/reference.h"

namespace myriad::bench {

CollCounts wholeCounts(size_t bytes, size_t typeSize, int /*nranks*/) {
  CollCounts c;
  c.count = bytes / typeSize;
  c.sendCount = c.count;
  c.recvCount = c.count;
  return c;
}

size_t blockCount(size_t bytes, size_t typeSize, int nranks) {
  const size_t perRank = bytes / typeSize / static_cast<size_t>(nranks);
  const size_t align = typeSize < 16 ? 16 / typeSize : 1;
  return perRank / align * align;
}

void reductionInput(const CollArgs& a, void* send, uint64_t salt) {
  test::fillInput(send, a.counts.sendCount, a.type, a.op, a.rank, a.nranks, salt);
}

void patternInput(const CollArgs& a, void* send, uint64_t salt) {
  test::fillPattern(send, a.counts.sendCount * test::dataTypeSize(a.type), a.rank, 0, salt);
}

void scaledBw(size_t bytes, double seconds, double factor, double* algBw, double* busBw) {
  *algBw = seconds > 0 ? static_cast<double>(bytes) / 1e9 / seconds : 0.0;
  *busBw = *algBw * factor;
}

void unitBw(size_t bytes, double seconds, int /*nranks*/, double* algBw, double* busBw) {
  scaledBw(bytes, seconds, 1.0, algBw, busBw);
}

void shardedBw(size_t bytes, double seconds, int nranks, double* algBw, double* busBw) {
  scaledBw(bytes, seconds, static_cast<double>(nranks - 1) / nranks, algBw, busBw);
}

size_t patternWrong(const void* got, size_t count, size_t elemSize, int source, size_t firstOffset, uint64_t salt) {
  const auto* bytes = static_cast<const unsigned char*>(got);
  size_t wrong = 0;
  for (size_t e = 0; e < count; ++e) {
    for (size_t b = 0; b < elemSize; ++b) {
      const size_t at = e * elemSize + b;
      if (bytes[at] == test::patternByte(source, firstOffset + at, salt)) continue;
      ++wrong;
      break;
    }
  }
  return wrong;
}

}  // namespace myriad::bench
