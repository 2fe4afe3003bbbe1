// dealCombos and sampleCombos. A combination is given to a seeded rank count; one whose buffers would exceed
// kMaxCallBytes there goes to the largest rank count where they fit (one rank always fits).
#include "sim_combos.h"

#include <algorithm>
#include <random>

#include "tests/common/dtype_values.h"

namespace myriad::sim {
namespace {

constexpr size_t kClassCount[] = {0, 1, 0 /* n-1 */, 13, 1009, 65537};
constexpr int kNminus1 = 2, kLarge = 5;

size_t countFor(int cls, int n) {
  return cls == kNminus1 ? static_cast<size_t>(n - 1) : kClassCount[cls];
}

bool fits(CollKind kind, int cls, myrDataType_t type, int n) {
  return bytesPerRank(kind, countFor(cls, n), type, n) * static_cast<size_t>(n) <= kMaxCallBytes;
}

SimCombo combo(CollKind kind, int cls, int type, int op, bool inPlace, int n, std::mt19937_64& rng) {
  SimCombo c;
  c.count = countFor(cls, n);
  c.type = static_cast<myrDataType_t>(type);
  c.op = reduces(kind) ? static_cast<myrRedOp_t>(op) : myrSum;
  c.inPlace = inPlace;
  c.root = static_cast<int>(rng() % static_cast<uint64_t>(n));
  c.salt = rng();
  c.nullUnused = rng() % 2 == 0;
  return c;
}

}  // namespace

std::vector<std::vector<SimCombo>> dealCombos(CollKind kind, const std::vector<int>& ranks, uint64_t seed) {
  std::mt19937_64 rng(seed ^ 0x5deece66dULL);
  std::vector<std::vector<SimCombo>> out(ranks.size());
  const int ops = reduces(kind) ? test::kNumRedOps : 1;
  auto place = [&](int cls, int type, int op, bool inPlace, size_t at) {
    while (at > 0 && !fits(kind, cls, static_cast<myrDataType_t>(type), ranks[at])) --at;
    out[at].push_back(combo(kind, cls, type, op, inPlace, ranks[at], rng));
  };
  if (kind == CollKind::kBarrier) {  // no count, type or op: a few calls per rank count
    for (size_t i = 0; i < ranks.size(); ++i)
      for (int k = 0; k < 4; ++k) place(0, 0, 0, false, i);
    return out;
  }
  for (int cls = 0; cls < kLarge; ++cls)
    for (int type = 0; type < test::kNumDataTypes; ++type)
      for (int op = 0; op < ops; ++op)
        for (bool inPlace : {false, true}) place(cls, type, op, inPlace, rng() % ranks.size());
  for (size_t i = 0; i < ranks.size(); ++i)
    for (int cls = 0; cls <= kLarge; ++cls)
      place(cls, static_cast<int>(rng() % test::kNumDataTypes), static_cast<int>(rng() % static_cast<uint64_t>(ops)),
            rng() % 2 == 0, i);
  for (auto& list : out) {  // n-1 duplicates 0 or 1 on small rank counts: harmless, and the order stays seeded
    std::shuffle(list.begin(), list.end(), rng);
  }
  return out;
}

std::vector<SimCombo> sampleCombos(CollKind kind, int n, uint64_t seed, int rounds) {
  std::mt19937_64 rng(seed ^ 0x9e3779b9ULL);
  const int ops = reduces(kind) ? test::kNumRedOps : 1;
  std::vector<SimCombo> out;
  if (kind == CollKind::kBarrier) {
    for (int k = 0; k < 4; ++k) out.push_back(combo(kind, 0, 0, 0, false, n, rng));
    return out;
  }
  for (int round = 0; round < rounds; ++round)
    for (int cls = 0; cls <= kLarge; ++cls)
      for (bool inPlace : {false, true}) {
        int type = static_cast<int>(rng() % test::kNumDataTypes);
        if (!fits(kind, cls, static_cast<myrDataType_t>(type), n)) type = myrInt8;
        out.push_back(combo(kind, cls, type, static_cast<int>(rng() % static_cast<uint64_t>(ops)), inPlace, n, rng));
      }
  return out;
}

}  // namespace myriad::sim
