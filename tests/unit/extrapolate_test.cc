// extrapolatePrice (src/tuner/extrapolate.h): the forms collectives take are recovered exactly from four
// points, a fit never lets a growth term go negative, and too few points are refused.
#include "tuner/extrapolate.h"

#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <vector>

namespace myriad {
namespace {

std::vector<PricePoint> sampled(const std::function<double(double)>& t) {
  std::vector<PricePoint> out;
  for (double n : {16.0, 32.0, 64.0, 128.0}) out.push_back({n, t(n)});
  return out;
}

TEST(Extrapolate, ARingsAndATreesFormsAreRecoveredExactly) {
  // A ring all-reduce: 2(n-1) steps of 20 us plus 2(n-1)/n of 100 ms of bandwidth.
  auto ring = [](double n) { return 2 * (n - 1) * 20 + 2 * (n - 1) / n * 1e5; };
  // A tree: 2 log2 n rounds of 30 us on top of 150 ms.
  auto tree = [](double n) { return 1.5e5 + 2 * std::log2(n) * 30; };
  // Every term at once.
  auto all = [](double n) { return 7 + 3 * n + 40 * std::log2(n) - 2000 / n; };
  for (double n : {256.0, 4096.0, 131072.0}) {
    EXPECT_NEAR(extrapolatePrice(sampled(ring), n), ring(n), 1e-6 * ring(n)) << n;
    EXPECT_NEAR(extrapolatePrice(sampled(tree), n), tree(n), 1e-6 * tree(n)) << n;
    EXPECT_NEAR(extrapolatePrice(sampled(all), n), all(n), 1e-6 * all(n)) << n;
  }
}

TEST(Extrapolate, GrowthTermsAreNeverNegative) {
  // Prices that fall with n as a straight line: an exact fit would need c1 < 0; the growth terms are held
  // at zero instead, so the extrapolation cannot fall below what a non-negative fit allows.
  auto falling = [](double n) { return 1000 - 2 * n; };
  const double at = extrapolatePrice(sampled(falling), 4096);
  EXPECT_GE(at, 0);
  EXPECT_GT(at, falling(4096));
  // A flat price stays flat.
  EXPECT_NEAR(extrapolatePrice(sampled([](double) { return 250.0; }), 131072), 250, 1e-9);
}

TEST(Extrapolate, TooFewDistinctPointsAreRefused) {
  EXPECT_EQ(extrapolatePrice({{16, 1}, {32, 2}, {64, 3}}, 4096), -1);
  EXPECT_EQ(extrapolatePrice({{16, 1}, {16, 2}, {32, 2}, {64, 3}}, 4096), -1);
  EXPECT_EQ(extrapolatePrice(sampled([](double n) { return n; }), 0), -1);
}

}  // namespace
}  // namespace myriad
