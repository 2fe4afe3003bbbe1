// shm: host-memory transport between processes (or threads) of one host, through a pair of one-directional
// shared-memory FIFOs per connected rank pair. Reaches peers with the same host identity and pid namespace
// (liveness is checked by pid). Small messages are copied into the FIFO by the sender and out by the
// receiver; large ones, where the kernel allows it, are read once by the receiver straight from the
// sender's buffer with process_vm_readv (CMA), the FIFO carrying only their address and the acknowledgement.
#pragma once

#include <deque>
#include <memory>
#include <vector>

#include "core/transport.h"
#include "transports/shm/shm_bell.h"
#include "transports/shm/shm_segment.h"

namespace myriad {

class ShmTransport final : public Transport {
 public:
  // Opens this rank's doorbell.
  static Result<std::unique_ptr<ShmTransport>> create(TransportContext ctx);
  const char* name() const override { return "shm"; }
  bool canReach(const PeerInfo& self, const PeerInfo& peer) const override;
  Result<std::unique_ptr<Connection>> connect(const PeerInfo& peer) override;
  WakeHook* wakeHook() override { return &hook_; }

 private:
  // This rank's doorbell as the executor's wake-up hook: peers ring it when data arrived or FIFO space
  // was freed for us.
  struct BellHook final : WakeHook {
    ShmBell bell;
    uint32_t seq() const override { return bell.seq(); }
    void sleep(uint32_t seen, int us) override { bell.wait(seen, us); }
  };
  explicit ShmTransport(TransportContext ctx) : ctx_(std::move(ctx)) {}
  TransportContext ctx_;
  BellHook hook_;
};

class ShmConnection final : public Connection {
 public:
  // cmaMinBytes: messages at least this large go by CMA when the receiver may read our memory;
  // SIZE_MAX disables CMA.
  ShmConnection(const PeerInfo& peer, std::string inName, uint32_t slots, size_t slotBytes, size_t cmaMinBytes);
  ~ShmConnection() override;
  Status createOutbound(const std::string& name);
  ShmBell& peerBell() { return peerBell_; }
  void setWakeHook(WakeHook* hook) { hook_ = hook; }
  WakeHook* wakeHook() const override { return hook_; }
  // Both paths combine: FIFO pieces are reduced out of the slot, CMA reads through a cache-sized bounce buffer.
  bool combinesOnReceive() const override { return true; }

  Status postSend(Request* r) override;
  Status postRecv(Request* r) override;
  Status poll() override;
  Status checkAlive() override;
  bool busy() const override { return !sends_.empty() || !recvs_.empty() || !unacked_.empty(); }
  bool drainStep() override;
  std::string describe() const override;

 private:
  Status pollSends();
  Status pollRecvs();
  void probeCma();
  void moved() {
    noteProgress();
    ++moved_;
  }
  Status readRemote(Request* r, const ShmSlotHeader* h);
  Status readRemoteInto(void* local, uint64_t remoteAddr, size_t bytes);
  // Delivers `bytes` at `src` to r->buf + offset: a copy, or r->combine's reduction.
  static void deliver(Request* r, size_t offset, const void* src, size_t bytes);

  ShmSegment out_;
  ShmSegment in_;
  ShmBell peerBell_;          // rung when we publish data for the peer or free FIFO space it waits for
  WakeHook* hook_ = nullptr;  // our own doorbell (ShmTransport's), rung by the peer
  std::string inName_;
  uint32_t slots_;
  size_t slotBytes_;
  std::deque<Request*> sends_;
  std::deque<Request*> recvs_;
  std::vector<uint8_t> bounce_;                        // combined CMA reads land here first, a slot's worth at a time
  std::deque<std::pair<Request*, uint64_t>> unacked_;  // CMA sends and their slot, until the tail passes it
  size_t cmaMinBytes_;
  uint64_t probe_;          // read by the receiver's CMA probe
  uint64_t moved_ = 0;      // slots published or consumed, to ring the peer's bell once per poll
  size_t sendOffset_ = 0;   // bytes of sends_.front() already in the FIFO
  size_t recvOffset_ = 0;   // bytes of recvs_.front() already received
  uint64_t fifoBytes_ = 0;  // received through the FIFO's slots
  uint64_t cmaReads_ = 0;   // received by process_vm_readv: messages, and their bytes
  uint64_t cmaBytes_ = 0;
};

}  // namespace myriad
