// A candidate's price at a rank count too large to price directly, from its prices on smaller cuts of the
// same communicator. No rule per algorithm: every candidate's prices are fitted to the same family,
//   t(n) = c0 + c1 n + c2 log2 n + c3 / n,   c1, c2 >= 0,
// which holds the forms collectives take at a fixed byte count: a ring's 2(n-1) per-step costs plus a
// bandwidth term (n-1)/n S/B (c0 + c1 n + c3 / n), a tree's or halving-doubling's log2 n rounds (c2), an
// all-to-all's n messages (c1). The growth terms may not be negative (more ranks never make a call of the
// same size cheaper through more steps); c0 and c3 are free.
#pragma once

#include <vector>

namespace myriad {

struct PricePoint {
  double ranks = 0, us = 0;
};

// The least-squares fit of the family to `points`, evaluated at `ranks`: the closest among the subsets of
// terms whose own fit keeps the growth terms non-negative, the fewest terms among fits as close (so that
// a form of fewer terms, a tree's or a flat price, is extrapolated by its own terms). Needs at least four
// points at distinct rank counts (one per coefficient, so that every form of the family is recovered);
// returns -1 with fewer. The prices are the cost model's, which has no noise; a price off the family (a
// tree's slices at some sizes) is fitted as closely as the family allows, and that error grows with the
// distance extrapolated.
double extrapolatePrice(const std::vector<PricePoint>& points, double ranks);

}  // namespace myriad
