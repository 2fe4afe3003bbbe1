// shm: host-memory transport between processes (or threads) of one host, through a pair of one-directional
// shared-memory FIFOs per connected rank pair. Reaches peers with the same host identity and pid namespace
// (liveness is checked by pid). Data is copied into the FIFO by the sender and out by the receiver.
#pragma once

#include <deque>
#include <memory>

#include "core/transport.h"
#include "transports/shm/shm_segment.h"

namespace myriad {

class ShmTransport final : public Transport {
 public:
  explicit ShmTransport(TransportContext ctx) : ctx_(std::move(ctx)) {}
  const char* name() const override { return "shm"; }
  bool canReach(const PeerInfo& self, const PeerInfo& peer) const override;
  Result<std::unique_ptr<Connection>> connect(const PeerInfo& peer) override;

 private:
  TransportContext ctx_;
};

class ShmConnection final : public Connection {
 public:
  ShmConnection(const PeerInfo& peer, std::string inName, uint32_t slots, size_t slotBytes)
      : Connection(peer), inName_(std::move(inName)), slots_(slots), slotBytes_(slotBytes) {}
  ShmSegment& outbound() { return out_; }

  Status postSend(Request* r) override;
  Status postRecv(Request* r) override;
  Status poll() override;
  Status checkAlive() override;
  bool busy() const override { return !sends_.empty() || !recvs_.empty(); }

 private:
  Status pollSends();
  Status pollRecvs();

  ShmSegment out_;
  ShmSegment in_;
  std::string inName_;
  uint32_t slots_;
  size_t slotBytes_;
  std::deque<Request*> sends_;
  std::deque<Request*> recvs_;
  size_t sendOffset_ = 0;  // bytes of sends_.front() already in the FIFO
  size_t recvOffset_ = 0;  // bytes of recvs_.front() already received
};

}  // namespace myriad
