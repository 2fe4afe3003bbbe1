// Least squares over each subset of the optional terms by the normal equations (at most 4x4, Gaussian
// elimination with partial pivoting); the subsets that keep the growth terms non-negative compete on their
// residual, which is the non-negative least-squares solution of a problem this small.
#include "tuner/extrapolate.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstddef>
#include <set>
#include <vector>

namespace myriad {
namespace {

constexpr size_t kTerms = 4;          // 1, n, log2 n, 1/n
constexpr unsigned kGrowth = 0b0110;  // n and log2 n: may not be negative

double term(size_t k, double n) {
  switch (k) {
    case 0: return 1;
    case 1: return n;
    case 2: return std::log2(n);
    default: return 1 / n;
  }
}

// Solves a (m x m) system in place; false when singular.
template <size_t M>
bool solve(std::array<std::array<double, M + 1>, M>& a, size_t m) {
  for (size_t c = 0; c < m; ++c) {
    size_t pivot = c;
    for (size_t r = c + 1; r < m; ++r)
      if (std::abs(a[r][c]) > std::abs(a[pivot][c])) pivot = r;
    if (std::abs(a[pivot][c]) < 1e-300) return false;
    std::swap(a[c], a[pivot]);
    for (size_t r = 0; r < m; ++r) {
      if (r == c) continue;
      const double f = a[r][c] / a[c][c];
      for (size_t k = c; k <= m; ++k) a[r][k] -= f * a[c][k];
    }
  }
  return true;
}

}  // namespace

double extrapolatePrice(const std::vector<PricePoint>& points, double ranks) {
  std::set<double> distinct;
  for (const PricePoint& p : points) distinct.insert(p.ranks);
  if (distinct.size() < kTerms || ranks <= 0 || *distinct.begin() <= 0) return -1;
  double scale = 0;
  for (const PricePoint& p : points) scale = std::max(scale, std::abs(p.us));
  // Per subset of terms: its fit's value at `ranks` and its root-mean-square residual.
  struct Fit {
    double at, rms;
    size_t terms;
  };
  std::vector<Fit> fits;
  for (unsigned subset = 1; subset < (1u << kTerms); subset += 2) {  // the constant term always
    std::array<size_t, kTerms> use{};
    size_t m = 0;
    for (size_t k = 0; k < kTerms; ++k)
      if (subset >> k & 1) use[m++] = k;
    std::array<std::array<double, kTerms + 1>, kTerms> a{};
    for (const PricePoint& p : points)
      for (size_t i = 0; i < m; ++i) {
        const double ti = term(use[i], p.ranks);
        for (size_t j = 0; j < m; ++j) a[i][j] += ti * term(use[j], p.ranks);
        a[i][m] += ti * p.us;
      }
    if (!solve<kTerms>(a, m)) continue;
    bool growthOk = true;
    for (size_t i = 0; i < m; ++i)
      if ((kGrowth >> use[i] & 1) && a[i][m] / a[i][i] < 0) growthOk = false;
    if (!growthOk) continue;
    double residual = 0, at = 0;
    for (const PricePoint& p : points) {
      double fit = 0;
      for (size_t i = 0; i < m; ++i) fit += a[i][m] / a[i][i] * term(use[i], p.ranks);
      residual += (fit - p.us) * (fit - p.us);
    }
    for (size_t i = 0; i < m; ++i) at += a[i][m] / a[i][i] * term(use[i], ranks);
    fits.push_back({std::max(0.0, at), std::sqrt(residual / static_cast<double>(points.size())), m});
  }
  // The closest fit; fits as close within rounding (with as many terms as points every feasible fit is
  // exact) go to the fewest terms.
  double best = -1;
  const Fit* chosen = nullptr;
  const double tie = 1e-9 * scale;
  for (const Fit& f : fits)
    if (!chosen || f.rms < chosen->rms - tie || (f.rms <= chosen->rms + tie && f.terms < chosen->terms)) chosen = &f;
  if (chosen) best = chosen->at;
  return best;
}

}  // namespace myriad
