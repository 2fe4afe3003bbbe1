// rdma: RoCEv2 (or InfiniBand) verbs between ranks. Per peer, N active reliable-connected QPs
// (MYRIAD_IB_QPS_PER_PEER) plus kSpareQps connected spares, each with its own flow label, so its own UDP source
// port and ECMP path; the lower rank of the pair chooses the ports (mp::PathSet) and publishes them, both ends
// set the same labels. Set-up: connect() creates the QPs
// and publishes them in the store ("rdma.qp.<me>.<peer>"); poll() picks up the peer's, moves the QPs to RTS,
// publishes "rdma.rtr.<me>.<peer>" and sends nothing until the peer's RTR record appears (a packet to a QP
// that is not ready yet would wait out a whole ACK timeout). Data: receiver-driven. For every posted receive
// the receiver sends a clear-to-send (inline SEND: sequence, tag, size, address, rkey, piece size) on one of
// its active QPs; the sender RDMA-WRITEs the message in pieces of that size over its active QPs (QpPaths
// decides which), every piece a WRITE WITH IMMEDIATE carrying the message's sequence number and piece index;
// the receiver counts them, whichever QP they came on. Invariant:
// messages match in order (the n-th send with the n-th receive) and a send is done only once the peer acknowledged its
// bytes.
#pragma once

#include <deque>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "core/transport.h"
#include "transports/rdma/ib_device.h"
#include "transports/rdma/mr_cache.h"
#include "transports/rdma/qp_paths.h"

namespace myriad {

class RdmaTransport final : public Transport {
 public:
  // Opens this rank's device (self->rdmaDevice receives its name); NotSupported with the reason when no
  // device works.
  static Result<std::unique_ptr<RdmaTransport>> create(TransportContext ctx, PeerInfo* self);
  const char* name() const override { return "rdma"; }
  bool canReach(const PeerInfo& self, const PeerInfo& peer) const override {
    return !self.rdmaDevice.empty() && !peer.rdmaDevice.empty();
  }
  Result<std::unique_ptr<Connection>> connect(const PeerInfo& peer) override;
  std::string telemetry() const override { return mp::formatTelemetry(mp::telemetrySnapshot(ctx_.commTag, "rdma")); }
  // Pinned ranges are registered with the NIC once (MrCache::pin).
  Status pin(uint64_t id, void* p, size_t n) override;
  void unpin(uint64_t id) override;
  ~RdmaTransport() override;

  IbDevice& device() { return *device_; }
  MrCache& mrs() { return *mrs_; }
  const TransportContext& context() const { return ctx_; }
  const mp::PortRange& ports() const { return ports_; }
  // This rank's host and pid namespace: peers that share both can be checked for liveness by pid.
  const std::string& selfHostId() const { return selfHostId_; }
  uint64_t selfPidNamespace() const { return selfPidNs_; }

 private:
  explicit RdmaTransport(TransportContext ctx) : ctx_(std::move(ctx)) {}
  TransportContext ctx_;
  std::unique_ptr<IbDevice> device_;
  std::unique_ptr<MrCache> mrs_;
  mp::PortRange ports_;
  std::string selfHostId_;
  uint64_t selfPidNs_ = 0;
};

class RdmaConnection final : public Connection {
 public:
  RdmaConnection(const PeerInfo& peer, RdmaTransport* transport);
  ~RdmaConnection() override;
  // Creates the CQ and QPs, posts receives, publishes this end in the store.
  Status setUp();
  Status postSend(Request* r) override;
  Status postRecv(Request* r) override;
  Status poll() override;
  Status checkAlive() override;
  bool busy() const override { return !sends_.empty() || !recvs_.empty(); }
  std::string describe() const override;

  static constexpr int kSqDepth = 64;       // send WRs outstanding per QP
  static constexpr int kRqDepth = 128;      // receives posted per QP
  static constexpr size_t kSlotBytes = 64;  // one control message
  static constexpr int kSpareQps = 2;       // connected spare QPs per peer, for re-pathing

  // Wire records, public for the handshake code in rdma_transport.cc.
  struct QpEnd {
    uint32_t qpn = 0;
    uint32_t psn = 0;
    uint32_t port = 0;  // the UDP source port of its flow label; published by the lower rank only (else 0)
  };
  struct End {
    std::string device;
    uint32_t port = 0, gidIndex = 0, lid = 0, mtu = 0;
    uint8_t gid[16]{};
    uint64_t maxMsg = 0;
    std::vector<QpEnd> qps;
  };

 private:
  struct Qp {
    ibv_qp* qp = nullptr;
    uint32_t psn = 0;
    uint32_t flowLabel = 0;
    uint16_t udpPort = 0;
    int sqUsed = 0;  // posted send WRs not completed yet
  };
  struct Cts {
    uint32_t magic, seq, tag, rkey;
    uint64_t addr, bytes;
    uint32_t pieceBytes, pad;
  };
  struct SendMsg {
    Request* r;
    uint32_t seq;
    bool started = false;  // its clear-to-send arrived and matched
    Cts cts{};
    size_t pieces = 0;
    std::vector<bool> posted;
    size_t nposted = 0;
    int outstanding = 0;
    ibv_mr* mr = nullptr;
  };
  struct RecvMsg {
    Request* r;
    uint32_t seq;
    bool ctsSent = false;
    int expected = 0;
    int got = 0;
    ibv_mr* mr = nullptr;
  };
  enum class State { kExchange, kWaitPeer, kReady, kFailed };

  Status handshake();
  Status connectQps(const End& remote);
  Status pollCq();
  Status onCompletion(const ibv_wc& wc);
  Status postCtsMessages();
  Status postWrites();
  Status postRecvSlot(int qp, int slot);
  Status fail(Status s);
  QpPathOptions pathOptions(const mp::PortRange& ports) const;
  void afterCompletions();
  Status wcError(const ibv_wc& wc) const;
  std::string where() const;  // "rank 3 (host pid 7) via rxe1:1 -> rxe2:1"
  void finishSends();
  void finishRecvs();

  RdmaTransport* t_;
  const Verbs& v_;
  State state_ = State::kExchange;
  Clock::time_point nextTry_{};
  std::string peerDevice_;
  size_t maxMsg_ = 0;
  ibv_cq* cq_ = nullptr;
  std::vector<Qp> qps_;
  std::unique_ptr<QpPaths> paths_;  // the sending side's choice of QPs; made once the ports are known
  size_t pieceBytes_ = 0;           // the piece size this end asks for in its clear-to-sends
  ibv_mr* ctlMr_ = nullptr;
  std::vector<uint8_t> ctl_;  // receive slots of every QP, then send slots of QP 0
  int maxInline_ = 0;
  int ctlSendNext_ = 0;
  std::deque<SendMsg> sends_;
  std::deque<RecvMsg> recvs_;
  std::map<uint32_t, Cts> ctsArrived_;  // clear-to-sends whose send is not posted yet, by sequence
  uint32_t sendSeq_ = 0, recvSeq_ = 0;
  Status failed_;
};

}  // namespace myriad
