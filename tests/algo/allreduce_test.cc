// algo tier: every all-reduce algorithm x ranks {1,2,3,4,5,7,8,16} x count {0, 1, n-1, 1009, 1<<20} x every
// dtype x every op x in place / out of place, with ranks as threads, checked against a reference computed
// independently (tests/common/reference.*, which does not use the library).
// Inputs repeat with a prime period (65537 elements), so the reference is computed once per case for one
// period; a misplaced slice would have to move by a multiple of that prime to go unnoticed, which no
// power-of-two chunk or segment offset does.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <random>
#include <sstream>
#include <vector>

#include "run_ranks.h"
#include "tests/common/dtype_values.h"
#include "tests/common/reference.h"

namespace myriad::test {
namespace {

constexpr size_t kPeriod = 65537;

struct Combo {
  size_t count;
  myrDataType_t type;
  myrRedOp_t op;
  uint64_t salt;
  std::vector<uint8_t> expected;  // min(count, kPeriod) elements, encoded in `type`
};

std::vector<Combo> makeCombos(int n, uint64_t seed) {
  std::vector<Combo> out;
  for (size_t count : {size_t{0}, size_t{1}, static_cast<size_t>(n - 1), size_t{1009}, size_t{1} << 20})
    for (int t = 0; t < kNumDataTypes; ++t)
      for (int o = 0; o < kNumRedOps; ++o) {
        Combo c{count, static_cast<myrDataType_t>(t), static_cast<myrRedOp_t>(o), seed + count * 131 + t * 7 + o, {}};
        size_t len = std::min(count, kPeriod);
        c.expected.resize(len * dataTypeSize(c.type));
        for (size_t i = 0; i < len; ++i)
          storeValue(c.expected.data(), i, c.type, expectedValue(c.type, c.op, n, i, c.salt));
        out.push_back(std::move(c));
      }
  return out;
}

void fillPeriodic(uint8_t* buf, const Combo& c, int rank, int n) {
  size_t es = dataTypeSize(c.type), len = std::min(c.count, kPeriod);
  fillInput(buf, len, c.type, c.op, rank, n, c.salt);
  for (size_t done = len; done < c.count; done += len)
    std::memcpy(buf + done * es, buf, std::min(len, c.count - done) * es);
}

// "" or a description of the first wrong element.
std::string check(const uint8_t* out, const Combo& c, int n) {
  size_t es = dataTypeSize(c.type), len = std::min(c.count, kPeriod);
  for (size_t base = 0; base < c.count; base += len) {
    size_t span = std::min(len, c.count - base);
    if (std::memcmp(out + base * es, c.expected.data(), span * es) == 0) continue;
    for (size_t i = 0; i < span; ++i) {
      double got = loadValue(out, base + i, c.type), want = loadValue(c.expected.data(), i, c.type);
      if (!closeEnough(got, want, c.type, c.op, n))
        return "element " + std::to_string(base + i) + " is " + std::to_string(got) + ", want " + std::to_string(want);
    }
  }
  return "";
}

std::string runAll(int rank, int n, myrComm_t comm, const std::vector<Combo>& combos, uint64_t seed) {
  size_t maxBytes = (size_t{1} << 20) * 8;
  std::vector<uint8_t> send(maxBytes), recv(maxBytes);
  for (const Combo& c : combos) {
    for (int inPlace = 0; inPlace < 2; ++inPlace) {
      fillPeriodic(send.data(), c, rank, n);
      uint8_t* out = inPlace ? send.data() : recv.data();
      myrResult_t rc = myrAllReduce(send.data(), out, c.count, c.type, c.op, comm, nullptr);
      std::ostringstream what;
      what << "count " << c.count << " " << dataTypeName(c.type) << " " << redOpName(c.op)
           << (inPlace ? " in place" : " out of place") << " (seed " << seed << ")";
      if (rc != myrSuccess) return what.str() + ": " + myrGetErrorString(rc) + ": " + myrGetLastError(comm);
      std::string wrong = check(out, c, n);
      if (!wrong.empty()) return what.str() + ": " + wrong;
    }
  }
  return "";
}

struct Case {
  std::string algo;
  int nranks;
};

void PrintTo(const Case& c, std::ostream* os) {
  *os << c.algo << " with " << c.nranks << " ranks";
}

class AllReduceAlgo : public ::testing::TestWithParam<Case> {};

TEST_P(AllReduceAlgo, MatchesReference) {
  const Case& c = GetParam();
  uint64_t seed = std::random_device{}();
  auto combos = makeCombos(c.nranks, seed);
  auto results = runRanks(
      c.nranks, [&](int rank, myrComm_t comm) { return runAll(rank, c.nranks, comm, combos, seed); }, c.algo);
  for (const auto& r : results) EXPECT_EQ(r.error, "") << c.algo << " rank " << r.rank << " of " << c.nranks;
}

std::vector<Case> cases() {
  std::vector<Case> out;
  for (const char* algo : {"allreduce.ring"})
    for (int n : {1, 2, 3, 4, 5, 7, 8, 16}) out.push_back({algo, n});
  return out;
}

INSTANTIATE_TEST_SUITE_P(All, AllReduceAlgo, ::testing::ValuesIn(cases()), [](const auto& info) {
  std::string name = info.param.algo + "_n" + std::to_string(info.param.nranks);
  for (char& ch : name)
    if (ch == '.') ch = '_';
  return name;
});

}  // namespace
}  // namespace myriad::test
