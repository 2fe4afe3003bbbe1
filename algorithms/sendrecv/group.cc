// sendrecv.group — the point-to-point calls of one group (or one lone myrSend/myrRecv), all posted at
// once: no call waits for another, so any pattern of sends and receives between any peers completes as
// long as every send has its matching receive. Messages to one peer keep the order of the calls.
#include "algorithms/algorithm.h"
#include "algorithms/schedule.h"

namespace myriad {
namespace {

class GroupSendRecv final : public Algorithm {
 public:
  const char* name() const override { return "sendrecv.group"; }
  CollKind kind() const override { return CollKind::kSendRecv; }
  Status supports(const CollArgs&, const Comm&) const override { return Status::ok(); }
  Result<std::unique_ptr<Task>> plan(const CollArgs& a, Comm& comm) const override {
    Schedule s(comm);
    std::vector<const P2pCall*> selfSends, selfRecvs;
    for (const P2pCall& c : a.p2p) {
      if (c.peer == comm.rank())
        (c.send ? selfSends : selfRecvs).push_back(&c);
      else if (c.send)
        s.send(c.peer, c.buf, c.bytes);
      else
        s.recv(c.peer, c.buf, c.bytes);
    }
    // Messages to self pair up in call order, like any other peer's (validation checked the counts).
    for (size_t i = 0; i < selfSends.size() && i < selfRecvs.size(); ++i) {
      if (selfSends[i]->bytes != selfRecvs[i]->bytes)
        return invalidArgument("send to self of " + std::to_string(selfSends[i]->bytes) + " bytes meets a receive of " +
                               std::to_string(selfRecvs[i]->bytes) + " bytes");
      s.copy(selfRecvs[i]->buf, selfSends[i]->buf, selfSends[i]->bytes);
    }
    return s.build(name());
  }
};

}  // namespace

const Algorithm& sendrecvGroup() {
  static const GroupSendRecv kAlgo;
  return kAlgo;
}

}  // namespace myriad
