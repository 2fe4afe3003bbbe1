// SimConnection: one rank's Connection to one peer over a SimFabric. A buffered send copies its bytes when
// posted and is done a seeded number of rounds later; a rendezvous send is done only when the receiver takes
// it, and its bytes are read then. A receive completes in poll() once the head message from the peer has
// arrived; a tag or size that does not match is an error naming the peer, as the real transports report it.
// Invariant: requests complete in post order per direction, and only inside poll(), like a real transport.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/transport.h"
#include "sim_fabric.h"

namespace myriad::sim {

class SimConnection final : public Connection {
 public:
  SimConnection(SimFabric& fabric, int rank, int peer, bool rendezvous, bool combines);
  Status postSend(Request* r) override;
  Status postRecv(Request* r) override;
  Status poll() override;
  Status checkAlive() override { return Status::ok(); }
  bool busy() const override { return sendHead_ < sends_.size() || recvHead_ < recvs_.size(); }
  bool combinesOnReceive() const override { return combines_; }
  std::string describe() const override { return "sim: the simulator's fabric"; }

  int rank() const { return rank_; }
  bool rendezvous() const { return rendezvous_; }
  // Messages from the peer not yet received: count and a description of the first, "" when none.
  size_t inboundCount() const { return inbound_.size() - inHead_; }
  std::string firstInbound() const;

 private:
  friend class SimFabric;
  struct Message {
    uint32_t tag = 0;
    size_t bytes = 0;
    bool arrived = false;
    std::vector<uint8_t> data;  // buffered sends: the bytes as posted
    Request* rdv = nullptr;     // rendezvous sends: the sender's request, read when received
    uint64_t sendSeq = 0;       // the sender's send number
  };
  struct Send {
    Request* r = nullptr;
    bool complete = false;
    bool delivered = false;  // the receiver has taken the bytes: from then on the sender may reuse them
    uint64_t checksum = 0;
  };
  void arrive(uint64_t seq);    // the fabric: inbound message `seq` has arrived
  void sendDone(uint64_t seq);  // the fabric or the receiver: send `seq` is complete
  Status deliver(Message& m, Request* r);
  // The sender's bytes may not change from the post until the receiver takes them or the send is done,
  // whichever comes first (until then a zero-copy transport may still read them). "" or the complaint.
  Status checkUnchanged(const Send& s, const char* until) const;
  static uint64_t checksum(const void* p, size_t n);

  SimFabric& fabric_;
  int rank_, peer_;
  bool rendezvous_, combines_;
  std::vector<Send> sends_;  // [sendHead_, end) not yet reported done; numbered from sendBase_
  size_t sendHead_ = 0;
  uint64_t sendBase_ = 0;
  std::vector<Request*> recvs_;
  size_t recvHead_ = 0;
  std::vector<Message> inbound_;  // from the peer; numbered from inBase_
  size_t inHead_ = 0;
  uint64_t inBase_ = 0;
  uint64_t lastArrival_ = 0;  // keeps arrivals on this pair in post order
};

}  // namespace myriad::sim
