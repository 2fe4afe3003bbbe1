// Max-min fair rates by progressive filling: every unfrozen flow's rate grows together until a link is
// full; the flows through that link freeze at its fair share; repeat with what the others left. The full
// O(links * flows) recomputation: FlowNetwork does the same incrementally; this is the reference its tests
// compare against.
#pragma once

#include <vector>

namespace myriad::netsim {

// flows[i]: the link indices flow i crosses (an empty list gets rate 0: it uses no shared link).
// capacity[l]: bytes per second of link l. Returns each flow's rate.
std::vector<double> maxMinRates(const std::vector<std::vector<int>>& flows, const std::vector<double>& capacity);

}  // namespace myriad::netsim
