// Guarded, Pattern and PeriodicReduction. The canary is an affine byte pattern of the offset; data patterns
// are splitmix bytes, so a stray write shows up at almost every byte it touched.
#include "buffers.h"

#include <algorithm>
#include <cstring>

#include "tests/common/dtype_values.h"
#include "tests/common/reference.h"

namespace myriad::test {
namespace {

uint8_t canaryByte(size_t i) {
  return static_cast<uint8_t>(0xa5 ^ (i * 0x3b));
}

uint64_t splitmix(uint64_t& state) {
  uint64_t z = (state += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

std::string hex(uint8_t b) {
  const char* d = "0123456789abcdef";
  return std::string("0x") + d[b >> 4] + d[b & 15];
}

}  // namespace

void Guarded::resize(size_t bytes, size_t shift) {
  bytes_ = bytes, front_ = kGuardBytes + shift;
  storage_.assign(bytes + front_ + kGuardBytes, 0);
}

void Guarded::fillCanary() {
  for (size_t i = 0; i < storage_.size(); ++i) storage_[i] = canaryByte(i);
}

std::string Guarded::untouched(size_t from, size_t to, const std::string& what) const {
  for (size_t i = from; i < to; ++i)
    if (storage_[front_ + i] != canaryByte(front_ + i))
      return what + " byte " + std::to_string(i) + " was overwritten (" + hex(storage_[front_ + i]) +
             "), it is outside the range the call may write";
  return "";
}

std::string Guarded::guardsIntact(const std::string& what) const {
  for (size_t i = 0; i < front_; ++i)
    if (storage_[i] != canaryByte(i))
      return what + ": guard byte " + std::to_string(front_ - i) + " before the buffer was overwritten";
  for (size_t i = front_ + bytes_; i < storage_.size(); ++i)
    if (storage_[i] != canaryByte(i))
      return what + ": guard byte " + std::to_string(i - front_ - bytes_) + " after the buffer (of " +
             std::to_string(bytes_) + " bytes) was overwritten";
  return "";
}

size_t shiftFor(size_t call, myrDataType_t type) {
  return (call % 3) * dataTypeSize(type);
}

Pattern::Pattern(uint64_t salt) : table_(2 * kPeriod) {
  uint64_t state = salt;
  for (size_t i = 0; i < kPeriod; ++i) table_[i] = table_[i + kPeriod] = static_cast<uint8_t>(splitmix(state) >> 56);
}

size_t Pattern::start(int source, size_t offset) const {
  return (offset + static_cast<size_t>(source) * 4099) % kPeriod;
}

void Pattern::fill(uint8_t* dst, size_t bytes, int source, size_t offset) const {
  for (size_t done = 0; done < bytes;) {
    size_t s = start(source, offset + done), span = std::min(bytes - done, kPeriod);
    std::memcpy(dst + done, table_.data() + s, span);
    done += span;
  }
}

std::string Pattern::check(const uint8_t* got, size_t bytes, int source, size_t offset, const std::string& what) const {
  for (size_t done = 0; done < bytes;) {
    size_t s = start(source, offset + done), span = std::min(bytes - done, kPeriod);
    if (std::memcmp(got + done, table_.data() + s, span) != 0) {
      for (size_t i = 0; i < span; ++i)
        if (got[done + i] != table_[s + i])
          return what + " byte " + std::to_string(done + i) + " is " + hex(got[done + i]) + ", want " +
                 hex(table_[s + i]) + " (byte " + std::to_string(offset + done + i) + " of source " +
                 std::to_string(source) + "'s data)";
    }
    done += span;
  }
  return "";
}

PeriodicReduction::PeriodicReduction(myrDataType_t type, myrRedOp_t op, int nranks, size_t count, uint64_t salt)
    : type_(type),
      op_(op),
      nranks_(nranks),
      count_(count),
      es_(dataTypeSize(type)),
      len_(std::min(count, kPeriod)),
      salt_(salt),
      expected_(2 * len_ * es_) {
  for (size_t i = 0; i < len_; ++i) storeValue(expected_.data(), i, type, expectedValue(type, op, nranks, i, salt));
  if (len_) std::memcpy(expected_.data() + len_ * es_, expected_.data(), len_ * es_);
  if (isFloatType(type) && (op == myrSum || op == myrAvg)) {
    tolerance_.resize(len_);
    for (size_t i = 0; i < len_; ++i) tolerance_[i] = tolerance(type, op, nranks, i, salt);
  }
}

void PeriodicReduction::fillInput(uint8_t* buf, int rank) const {
  myriad::test::fillInput(buf, len_, type_, op_, rank, nranks_, salt_);
  for (size_t done = len_; done < count_; done += len_)
    std::memcpy(buf + done * es_, buf, std::min(len_, count_ - done) * es_);
}

std::string PeriodicReduction::check(const uint8_t* out, size_t first, size_t len) const {
  for (size_t done = 0; done < len;) {
    size_t s = (first + done) % len_, span = std::min(len - done, len_);
    const uint8_t* want = expected_.data() + s * es_;
    if (std::memcmp(out + done * es_, want, span * es_) != 0) {
      for (size_t i = 0; i < span; ++i) {
        double g = loadValue(out, done + i, type_), w = loadValue(want, i, type_);
        if (!closeEnough(g, w, tolerance_.empty() ? 0.0 : tolerance_[(s + i) % len_]))
          return "element " + std::to_string(done + i) + " (reduced index " + std::to_string(first + done + i) +
                 ") is " + std::to_string(g) + ", want " + std::to_string(w) +
                 (tolerance_.empty() ? "" : " within " + std::to_string(tolerance_[(s + i) % len_]));
      }
    }
    done += span;
  }
  return "";
}

std::string unchanged(const uint8_t* got, const std::vector<uint8_t>& want, const std::string& what) {
  if (want.empty() || std::memcmp(got, want.data(), want.size()) == 0) return "";
  for (size_t i = 0; i < want.size(); ++i)
    if (got[i] != want[i])
      return what + " byte " + std::to_string(i) + " was modified (" + hex(want[i]) + " -> " + hex(got[i]) + ")";
  return "";
}

}  // namespace myriad::test
