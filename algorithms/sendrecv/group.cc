// sendrecv.group — the point-to-point calls of one group (or one lone myrSend/myrRecv), all posted at
// once: no call waits for another, so any pattern of sends and receives between any peers completes as
// long as every send has its matching receive. Messages to one peer keep the order of the calls.
#include "algorithms/algorithm.h"
#include "plan/schedule.h"

namespace myriad {
namespace {

class GroupSendRecv final : public Algorithm {
 public:
  const char* name() const override { return "sendrecv.group"; }
  CollKind kind() const override { return CollKind::kSendRecv; }
  Status supports(const CollArgs&, const CommView&) const override { return Status::ok(); }
  Result<Schedule> plan(const CollArgs& a, const CommView& comm) const override {
    Schedule s(name());
    std::vector<size_t> selfSends, selfRecvs;  // indices into a.p2p; call i's buffer is BufRef::user(i)
    for (size_t i = 0; i < a.p2p.size(); ++i) {
      const P2pCall& c = a.p2p[i];
      if (c.peer == comm.rank)
        (c.send ? selfSends : selfRecvs).push_back(i);
      else if (c.send)
        s.send(c.peer, BufRef::user(i), c.bytes);
      else
        s.recv(c.peer, BufRef::user(i), c.bytes);
    }
    // Messages to self pair up in call order, like any other peer's (validation checked the counts).
    for (size_t i = 0; i < selfSends.size() && i < selfRecvs.size(); ++i) {
      const P2pCall &send = a.p2p[selfSends[i]], &recv = a.p2p[selfRecvs[i]];
      if (send.bytes != recv.bytes)
        return invalidArgument("send to self of " + std::to_string(send.bytes) + " bytes meets a receive of " +
                               std::to_string(recv.bytes) + " bytes");
      s.copy(BufRef::user(selfRecvs[i]), BufRef::user(selfSends[i]), send.bytes);
    }
    return s;
  }
};

}  // namespace

const Algorithm& sendrecvGroup() {
  static const GroupSendRecv kAlgo;
  return kAlgo;
}

}  // namespace myriad
