// Test buffers for the algo tier: a Guarded buffer wrapped in canary bytes, a byte Pattern for collectives
// that move data, and a PeriodicReduction for those that reduce. Invariant: data and expected results
// repeat with a prime period, so checks are memcmp against a precomputed period, never a reference run
// per element, and a block delivered to the wrong place differs unless shifted by a multiple of the prime.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "myriad/myriad.h"

namespace myriad::test {

constexpr size_t kPeriod = 65537;  // prime; elements for reductions, bytes for patterns

// `bytes` bytes with kGuardBytes of canary on either side. fillCanary() paints all of it (guards included)
// with a canary pattern; untouched(from, to) checks a body range. `shift` moves the body off its 64-byte
// alignment (by one element, say), for kernels that assume more alignment than an element's.
class Guarded {
 public:
  static constexpr size_t kGuardBytes = 64;
  explicit Guarded(size_t bytes = 0, size_t shift = 0) { resize(bytes, shift); }
  void resize(size_t bytes, size_t shift = 0);
  uint8_t* data() { return storage_.data() + front_; }
  const uint8_t* data() const { return storage_.data() + front_; }
  size_t size() const { return bytes_; }
  void fillCanary();
  // "" or where a byte of [from, to) (body offsets) is no longer canary; `what` names the buffer.
  std::string untouched(size_t from, size_t to, const std::string& what) const;
  // Both guards still canary.
  std::string guardsIntact(const std::string& what) const;
  // Everything it holds, guards included (to save and restore its state).
  std::vector<uint8_t>& storage() { return storage_; }

 private:
  std::vector<uint8_t> storage_;
  size_t bytes_ = 0, front_ = kGuardBytes;
};

// The shift of call number `call`'s buffers: 0, 1 or 2 elements of `type` in turn.
size_t shiftFor(size_t call, myrDataType_t type);

// Pseudo-random bytes that depend on (salt, source, offset); `source` names whose data it is (a rank, or
// sender * n + receiver for all-to-all blocks).
class Pattern {
 public:
  explicit Pattern(uint64_t salt);
  void fill(uint8_t* dst, size_t bytes, int source, size_t offset = 0) const;
  // "" or the first byte of got[0, bytes) that is not the source's data at `offset`.
  std::string check(const uint8_t* got, size_t bytes, int source, size_t offset, const std::string& what) const;

 private:
  size_t start(int source, size_t offset) const;
  std::vector<uint8_t> table_;  // two periods, so any start < kPeriod has kPeriod bytes after it
};

// One reduction combination: every rank's input (tests/common/reference.h, repeated with period kPeriod
// over the element index) and the result at every index, precomputed for one period.
class PeriodicReduction {
 public:
  PeriodicReduction(myrDataType_t type, myrRedOp_t op, int nranks, size_t count, uint64_t salt);
  // count elements of rank's input at index 0..count
  void fillInput(uint8_t* buf, int rank) const;
  // "" or the first of out[0, len) that is not the reduction at indices first..first+len.
  std::string check(const uint8_t* out, size_t first, size_t len) const;
  size_t elemSize() const { return es_; }

 private:
  myrDataType_t type_;
  myrRedOp_t op_;
  int nranks_;
  size_t count_, es_, len_;
  uint64_t salt_;
  std::vector<uint8_t> expected_;  // two periods (or 2 * count when shorter)
  std::vector<double> tolerance_;  // one period; empty where every result must be exact
};

// "" or where got[0, want.size()) differs from want: for send buffers that a call must leave alone.
std::string unchanged(const uint8_t* got, const std::vector<uint8_t>& want, const std::string& what);

}  // namespace myriad::test
