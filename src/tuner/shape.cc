// shapeOf: the facts of a call that every rank agrees on, which is all a tuner may look at.
#include <algorithm>

#include "plan/dtype.h"
#include "tuner/tuner.h"

namespace myriad {

CallShape shapeOf(const CollArgs& a, const CommView& comm) {
  CallShape s;
  s.kind = a.kind;
  s.dtype = a.dtype;
  s.nranks = comm.nranks();
  s.nhosts = static_cast<int>(comm.hosts().size());
  for (const auto& h : comm.hosts()) s.maxLocal = std::max(s.maxLocal, static_cast<int>(h.size()));
  size_t es = dtypeSize(a.dtype);
  switch (a.kind) {
    case CollKind::kAllToAll:  // bytes per peer; all-to-allv has no size all ranks agree on
      s.perPeerCounts = !a.sendCounts.empty();
      s.bytes = s.perPeerCounts ? 0 : a.count * es;
      break;
    case CollKind::kSendRecv:
      for (const P2pCall& c : a.p2p) s.bytes += c.bytes;
      break;
    default: s.bytes = a.count * es; break;
  }
  return s;
}

}  // namespace myriad
