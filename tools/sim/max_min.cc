// Progressive filling, O(links * flows) per round and at most one round per link.
#include "tools/sim/max_min.h"

#include <cstddef>
#include <limits>

namespace myriad::netsim {

std::vector<double> maxMinRates(const std::vector<std::vector<int>>& flows, const std::vector<double>& capacity) {
  const size_t nf = flows.size(), nl = capacity.size();
  std::vector<double> rate(nf, 0.0), left(capacity);
  std::vector<char> frozen(nf, 0);
  std::vector<int> users(nl, 0);
  size_t active = 0;
  for (size_t f = 0; f < nf; ++f) {
    if (flows[f].empty()) {
      frozen[f] = 1;
      continue;
    }
    ++active;
    for (int l : flows[f]) ++users[static_cast<size_t>(l)];
  }
  while (active > 0) {
    double share = std::numeric_limits<double>::infinity();
    size_t tight = nl;
    for (size_t l = 0; l < nl; ++l)
      if (users[l] > 0 && left[l] / users[l] < share) share = left[l] / users[l], tight = l;
    if (tight == nl) break;
    for (size_t f = 0; f < nf; ++f) {
      if (frozen[f]) continue;
      bool through = false;
      for (int l : flows[f]) through |= static_cast<size_t>(l) == tight;
      if (!through) continue;
      frozen[f] = 1, --active, rate[f] = share;
      for (int l : flows[f]) left[static_cast<size_t>(l)] -= share, --users[static_cast<size_t>(l)];
    }
    left[tight] = 0, users[tight] = 0;
  }
  return rate;
}

}  // namespace myriad::netsim
