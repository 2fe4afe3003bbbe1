// Bounds-checked little-endian encoding for everything Myriad puts on a wire or in a store. A Reader never
// reads past its input: a short or malformed buffer sets failed() instead of crashing.
#pragma once

#include <cstdint>
#include <cstring>
#include <string>

#include "base/clock.h"

namespace myriad {

class Writer {
 public:
  void u8(uint8_t v) { out_.push_back(v); }
  void u32(uint32_t v) { raw(&v, 4); }
  void u64(uint64_t v) { raw(&v, 8); }
  void i32(int32_t v) { raw(&v, 4); }
  void str(const std::string& s) {
    u32(static_cast<uint32_t>(s.size()));
    raw(s.data(), s.size());
  }
  void raw(const void* p, size_t n) {
    auto b = static_cast<const uint8_t*>(p);
    out_.insert(out_.end(), b, b + n);
  }
  void reserve(size_t n) { out_.reserve(n); }
  Bytes& bytes() { return out_; }

 private:
  Bytes out_;
};

class Reader {
 public:
  Reader(const uint8_t* p, size_t n) : p_(p), n_(n) {}
  explicit Reader(const Bytes& b) : Reader(b.data(), b.size()) {}
  uint8_t u8() {
    uint8_t v = 0;
    raw(&v, 1);
    return v;
  }
  uint32_t u32() {
    uint32_t v = 0;
    raw(&v, 4);
    return v;
  }
  uint64_t u64() {
    uint64_t v = 0;
    raw(&v, 8);
    return v;
  }
  int32_t i32() {
    int32_t v = 0;
    raw(&v, 4);
    return v;
  }
  // Strings longer than maxLen fail the reader.
  std::string str(size_t maxLen = 4096) {
    uint32_t len = u32();
    if (failed_ || len > maxLen || len > n_ - off_) return fail(), std::string();
    std::string s(reinterpret_cast<const char*>(p_ + off_), len);
    off_ += len;
    return s;
  }
  void raw(void* dst, size_t n) {
    if (failed_ || n > n_ - off_) return fail();
    if (n == 0) return;  // dst may be an empty buffer's null data(): memcpy must not see it
    std::memcpy(dst, p_ + off_, n);
    off_ += n;
  }
  bool failed() const { return failed_; }
  bool atEnd() const { return off_ == n_; }
  size_t remaining() const { return failed_ ? 0 : n_ - off_; }

 private:
  void fail() { failed_ = true; }
  const uint8_t* p_;
  size_t n_;
  size_t off_ = 0;
  bool failed_ = false;
};

}  // namespace myriad
