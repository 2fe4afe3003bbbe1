// What every fuzz target shares: a check that stops the run (libFuzzer keeps the input as a crash) when a
// property of the code under test does not hold, and a cursor that takes typed values off the input.
#pragma once

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#define FUZZ_CHECK(cond, what)                                                                      \
  do {                                                                                              \
    if (!(cond)) {                                                                                  \
      std::fprintf(stderr, "fuzz: %s:%d: %s does not hold: %s\n", __FILE__, __LINE__, #cond, what); \
      std::abort();                                                                                 \
    }                                                                                               \
  } while (0)

namespace myriad::fuzz {

// Takes bytes off the front of the input; past its end every value is 0 and every string empty.
class Input {
 public:
  Input(const uint8_t* p, size_t n) : p_(p), n_(n) {}
  uint8_t u8() { return n_ > 0 ? (--n_, *p_++) : 0; }
  std::string bytes(size_t max) {
    size_t k = max < n_ ? max : n_;
    std::string s(reinterpret_cast<const char*>(p_), k);
    p_ += k;
    n_ -= k;
    return s;
  }
  const uint8_t* data() const { return p_; }
  size_t size() const { return n_; }

 private:
  const uint8_t* p_;
  size_t n_;
};

}  // namespace myriad::fuzz
