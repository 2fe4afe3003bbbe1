// rdma transport: device choice, QP creation, and the set-up handshake through the store (see
// rdma_transport.h for the protocol).
#include "transports/rdma/rdma_transport.h"

#include <sched.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <random>

#include "base/log.h"
#include "base/wire.h"
#include "rendezvous/store.h"
#include "topology/topology.h"
#include "transports/rdma/rdma.h"
#include "transports/rdma/rdma_end.h"

namespace myriad {
namespace {
constexpr int kSqDepth = RdmaConnection::kSqDepth;
constexpr int kRqDepth = RdmaConnection::kRqDepth;
constexpr size_t kSlotBytes = RdmaConnection::kSlotBytes;
constexpr int kInline = 64;
constexpr auto kRetryEvery = std::chrono::microseconds(500);

std::string qpKey(int from, int to) {
  return "rdma.qp." + std::to_string(from) + "." + std::to_string(to);
}
std::string rtrKey(int from, int to) {
  return "rdma.rtr." + std::to_string(from) + "." + std::to_string(to);
}

uint32_t randomPsn(int rank, int peer, int qp) {
  uint64_t x = static_cast<uint64_t>(std::chrono::steady_clock::now().time_since_epoch().count()) ^
               (static_cast<uint64_t>(getpid()) << 20) ^ (static_cast<uint64_t>(rank) << 40) ^
               (static_cast<uint64_t>(peer) << 8) ^ static_cast<uint64_t>(qp);
  x ^= x >> 33;
  x *= 0xff51afd7ed558ccdULL;
  x ^= x >> 29;
  return static_cast<uint32_t>(x & 0xffffff);
}

std::vector<int> allowedCpus() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof(set), &set) != 0) return {};
  std::vector<int> cpus;
  for (int c = 0; c < CPU_SETSIZE; ++c)
    if (CPU_ISSET(c, &set)) cpus.push_back(c);
  return cpus;
}

}  // namespace

Result<std::unique_ptr<RdmaTransport>> RdmaTransport::create(TransportContext ctx, PeerInfo* self) {
  MYR_ASSIGN_OR_RETURN(const Verbs* v, loadVerbs());
  std::unique_ptr<RdmaTransport> t(new RdmaTransport(std::move(ctx)));
  NicChoice topo;
  topo.why = "no topology";
  if (t->ctx_.topology) {
    NicWish wish;
    wish.gpu = t->ctx_.gpu;
    wish.cpus = allowedCpus();
    wish.spread = t->ctx_.rank;  // the local index is not known yet: peers are exchanged after this
    topo = topologyNic(*t->ctx_.topology, wish);
  }
  MYR_ASSIGN_OR_RETURN(t->device_, IbDevice::open(*v, *t->ctx_.config, topo, t->ctx_.rank));
  // Only once a device is in use: MYRIAD_NET_PORTS is shared with tcp, whose ports may lie below RoCEv2's.
  MYR_ASSIGN_OR_RETURN(t->ports_, rdmaPortRange(t->ctx_.config->netPorts));
  t->mrs_ = std::make_unique<MrCache>(*v, t->device_->pd(), t->ctx_.config->ibRegCache, t->device_->describe());
  t->selfHostId_ = self->hostId;
  t->selfPidNs_ = self->pidNamespace;
  self->rdmaDevice = t->device_->name() + ":" + std::to_string(t->device_->port());
  MYR_LOG(kInfo, kNet, t->ctx_.rank, "rdma: using " + t->device_->describe() + " (" + t->device_->choiceNote() + ")");
  return t;
}

Result<std::unique_ptr<Transport>> createRdmaTransport(const TransportContext& ctx, PeerInfo* self) {
  MYR_ASSIGN_OR_RETURN(std::unique_ptr<RdmaTransport> t, RdmaTransport::create(ctx, self));
  return std::unique_ptr<Transport>(std::move(t));
}

Status RdmaTransport::pin(uint64_t id, void* p, size_t n) {
  return mrs_->pin(id, p, n);
}

void RdmaTransport::unpin(uint64_t id) {
  mrs_->unpin(id);
}

RdmaTransport::~RdmaTransport() {
  if (!mrs_) return;
  const MrCache::Stats& s = mrs_->stats();
  MYR_LOG(kInfo, kNet, ctx_.rank,
          "rdma: memory registrations: " + std::to_string(s.registrations) + " for " + std::to_string(s.acquires) +
              " message buffers (" + std::to_string(s.pinnedHits) + " in registered buffers, " +
              std::to_string(s.keptHits) + " kept)");
}

Result<std::unique_ptr<Connection>> RdmaTransport::connect(const PeerInfo& peer) {
  auto c = std::make_unique<RdmaConnection>(peer, this);
  MYR_TRY(c->setUp());
  return std::unique_ptr<Connection>(std::move(c));
}

RdmaConnection::RdmaConnection(const PeerInfo& peer, RdmaTransport* t)
    : Connection(peer), t_(t), v_(t->device().verbs()) {}

RdmaConnection::~RdmaConnection() {
  if (paths_) mp::forgetTelemetry(t_->context().commTag, peer_.rank);
  for (auto& s : sends_) t_->mrs().release(s.mr);
  for (auto& r : recvs_) t_->mrs().release(r.mr);
  for (auto& q : qps_)
    if (q.qp) v_.destroyQp(q.qp);
  if (cq_) v_.destroyCq(cq_);
  if (ctlMr_) v_.deregMr(ctlMr_);
}

std::string RdmaConnection::where() const {
  return peer_.describe() + " via " + t_->device().name() + ":" + std::to_string(t_->device().port()) + " -> " +
         (peerDevice_.empty() ? peer_.rdmaDevice : peerDevice_);
}

std::string RdmaConnection::describe() const {
  std::string ports;
  for (const Qp& q : qps_) ports += (ports.empty() ? "" : ",") + std::to_string(q.udpPort);
  const char* state = state_ == State::kReady ? "ready" : state_ == State::kFailed ? "failed" : "connecting";
  return "rdma: " + where() + ", " + std::to_string(qps_.size()) + " RC QPs (UDP source ports " + ports + "), " + state;
}

Status RdmaConnection::setUp() {
  IbDevice& d = t_->device();
  const TransportContext& ctx = t_->context();
  const int n = ctx.config->ibQpsPerPeer + kSpareQps;
  // The lower rank chooses every QP's port; the higher one learns them from its record (connectQps).
  if (ctx.rank < peer_.rank) paths_ = std::make_unique<QpPaths>(pathOptions(t_->ports()));
  pieceBytes_ = std::max<size_t>(4096, ctx.config->netChunkBytes);
  cq_ = v_.createCq(d.context(), n * (kSqDepth + kRqDepth) + 16, nullptr, nullptr, 0);
  if (!cq_) return systemError("rdma: ibv_create_cq on " + d.describe() + " for " + peer_.describe(), errno);
  ctl_.assign((static_cast<size_t>(n) * kRqDepth + kSqDepth) * kSlotBytes, 0);
  ctlMr_ = v_.regMr(d.pd(), ctl_.data(), ctl_.size(), IBV_ACCESS_LOCAL_WRITE);
  if (!ctlMr_) return systemError("rdma: ibv_reg_mr of control slots on " + d.describe(), errno);
  End mine;
  mine.device = d.name();
  mine.port = static_cast<uint32_t>(d.port());
  mine.gidIndex = static_cast<uint32_t>(d.gidIndex());
  std::memcpy(mine.gid, d.gid().raw, 16);
  mine.lid = d.lid();
  mine.mtu = static_cast<uint32_t>(d.activeMtu());
  mine.maxMsg = d.maxMsg();
  maxInline_ = kInline;
  for (int i = 0; i < n; ++i) {
    ibv_qp_init_attr init{};
    init.send_cq = cq_;
    init.recv_cq = cq_;
    init.qp_type = IBV_QPT_RC;
    init.cap.max_send_wr = kSqDepth;
    init.cap.max_recv_wr = kRqDepth;
    init.cap.max_send_sge = 1;
    init.cap.max_recv_sge = 1;
    init.cap.max_inline_data = static_cast<uint32_t>(maxInline_);
    ibv_qp* qp = v_.createQp(d.pd(), &init);
    if (!qp && maxInline_ > 0) {  // a device without inline data: control messages go from registered slots
      maxInline_ = 0;
      init.cap.max_inline_data = 0;
      qp = v_.createQp(d.pd(), &init);
    }
    if (!qp) return systemError("rdma: ibv_create_qp on " + d.describe() + " for " + peer_.describe(), errno);
    maxInline_ = std::min<int>(maxInline_, static_cast<int>(init.cap.max_inline_data));
    Qp q;
    q.qp = qp;
    q.psn = randomPsn(ctx.rank, peer_.rank, i);
    if (paths_) {
      q.udpPort = paths_->port(i);
      q.flowLabel = flowLabelForPort(q.udpPort);
    }
    qps_.push_back(q);
    ibv_qp_attr a{};
    a.qp_state = IBV_QPS_INIT;
    a.pkey_index = 0;
    a.port_num = static_cast<uint8_t>(d.port());
    a.qp_access_flags = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ;
    int rc = v_.modifyQp(qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS);
    if (rc != 0) return systemError("rdma: QP to INIT on " + d.describe() + " for " + peer_.describe(), rc);
    for (int s = 0; s < kRqDepth; ++s) MYR_TRY(postRecvSlot(i, s));
    mine.qps.push_back({qp->qp_num, q.psn, q.udpPort});
  }
  MYR_TRY(ctx.store->set(qpKey(ctx.rank, peer_.rank), encodeRdmaEnd(mine)).addContext("rdma: publishing QPs"));
  return Status::ok();
}

QpPathOptions RdmaConnection::pathOptions(const mp::PortRange& ports) const {
  const TransportContext& ctx = t_->context();
  const Config& c = *ctx.config;
  QpPathOptions o;
  o.active = c.ibQpsPerPeer;
  o.spares = kSpareQps;
  o.adaptive = c.netAdaptive;
  o.capBytes = std::max(c.netChunkBytes, c.netInflightBytes / static_cast<size_t>(c.ibQpsPerPeer));
  o.ports = ports;
  const uint64_t self = static_cast<uint64_t>(ctx.rank), peer = static_cast<uint64_t>(peer_.rank);
  o.seed = c.netSeed ? c.netSeed * 1000003 + self * 7919 + peer
                     : std::random_device{}() ^ (static_cast<uint64_t>(std::random_device{}()) << 32);
  return o;
}

Status RdmaConnection::postRecvSlot(int qp, int slot) {
  ibv_sge sge{};
  sge.addr = reinterpret_cast<uintptr_t>(ctl_.data()) +
             (static_cast<size_t>(qp) * kRqDepth + static_cast<size_t>(slot)) * kSlotBytes;
  sge.length = kSlotBytes;
  sge.lkey = ctlMr_->lkey;
  ibv_recv_wr wr{};
  wr.wr_id = (uint64_t{3} << 60) | (static_cast<uint64_t>(qp) << 32) | static_cast<uint64_t>(slot);
  wr.sg_list = &sge;
  wr.num_sge = 1;
  ibv_recv_wr* bad = nullptr;
  int rc = ibv_post_recv(qps_[static_cast<size_t>(qp)].qp, &wr, &bad);
  if (rc != 0) return systemError("rdma: ibv_post_recv to " + where(), rc);
  return Status::ok();
}

Status RdmaConnection::handshake() {
  const TransportContext& ctx = t_->context();
  auto now = Clock::now();
  if (now < nextTry_) return Status::ok();
  nextTry_ = now + kRetryEvery;
  if (state_ == State::kExchange) {
    auto got = ctx.store->tryGet(qpKey(peer_.rank, ctx.rank));
    if (!got.isOk()) return got.status().code() == Code::kNotSupported ? Status::ok() : got.takeStatus();
    End remote;
    if (!decodeRdmaEnd(got.value(), &remote))
      return Status(Code::kRemoteError, "rdma: malformed QP record of " + peer_.describe());
    if (remote.qps.size() != qps_.size())
      return invalidUsage("rdma: " + peer_.describe() + " opens " + std::to_string(remote.qps.size()) +
                          " QPs per peer (spares included), this rank " + std::to_string(qps_.size()) +
                          " (MYRIAD_IB_QPS_PER_PEER must be equal on all ranks)");
    if (!paths_) {  // the higher rank: the lower one chose the ports
      mp::PortRange theirs;
      for (const auto& q : remote.qps) {
        if (q.port < 0xC000 || q.port > 0xFFFF ||
            std::find(theirs.preset.begin(), theirs.preset.end(), q.port) != theirs.preset.end())
          return Status(Code::kRemoteError, "rdma: " + peer_.describe() +
                                                " published an invalid or repeated UDP port " + std::to_string(q.port) +
                                                " for a QP");
        theirs.preset.push_back(static_cast<uint16_t>(q.port));
      }
      theirs.lo = 0xC000;
      theirs.hi = 0xFFFF;
      paths_ = std::make_unique<QpPaths>(pathOptions(theirs));
      for (int i = 0; i < static_cast<int>(qps_.size()); ++i) {
        qps_[static_cast<size_t>(i)].udpPort = paths_->port(i);
        qps_[static_cast<size_t>(i)].flowLabel = flowLabelForPort(paths_->port(i));
      }
    }
    MYR_TRY(connectQps(remote));
    MYR_TRY(ctx.store->set(rtrKey(ctx.rank, peer_.rank), Bytes{1}).addContext("rdma: publishing RTR"));
    state_ = State::kWaitPeer;
  }
  if (state_ == State::kWaitPeer) {
    auto got = ctx.store->tryGet(rtrKey(peer_.rank, ctx.rank));
    if (!got.isOk()) return got.status().code() == Code::kNotSupported ? Status::ok() : got.takeStatus();
    state_ = State::kReady;
    noteProgress();
  }
  return Status::ok();
}

Status RdmaConnection::connectQps(const End& remote) {
  IbDevice& d = t_->device();
  const Config& cfg = *t_->context().config;
  peerDevice_ = remote.device + ":" + std::to_string(remote.port);
  maxMsg_ = std::min<size_t>(d.maxMsg(), remote.maxMsg ? remote.maxMsg : d.maxMsg());
  const auto mtu = static_cast<ibv_mtu>(std::min<uint32_t>(static_cast<uint32_t>(d.activeMtu()), remote.mtu));
  std::string labels, ports, spares;
  for (size_t i = 0; i < qps_.size(); ++i) {
    Qp& q = qps_[i];
    ibv_qp_attr a{};
    a.qp_state = IBV_QPS_RTR;
    a.path_mtu = mtu;
    a.dest_qp_num = remote.qps[i].qpn;
    a.rq_psn = remote.qps[i].psn;
    a.max_dest_rd_atomic = 1;
    a.min_rnr_timer = 12;
    a.ah_attr.port_num = static_cast<uint8_t>(d.port());
    a.ah_attr.sl = static_cast<uint8_t>(cfg.ibSl);
    if (d.roce()) {
      a.ah_attr.is_global = 1;
      std::memcpy(a.ah_attr.grh.dgid.raw, remote.gid, 16);
      a.ah_attr.grh.sgid_index = static_cast<uint8_t>(d.gidIndex());
      a.ah_attr.grh.hop_limit = 64;
      a.ah_attr.grh.traffic_class = static_cast<uint8_t>(cfg.ibTc);
      a.ah_attr.grh.flow_label = q.flowLabel;
    } else {
      a.ah_attr.dlid = static_cast<uint16_t>(remote.lid);
    }
    int rc = v_.modifyQp(q.qp, &a,
                         IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
                             IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER);
    if (rc != 0) return systemError("rdma: QP " + std::to_string(i) + " to RTR with " + where(), rc);
    ibv_qp_attr s{};
    s.qp_state = IBV_QPS_RTS;
    s.timeout = static_cast<uint8_t>(cfg.ibTimeout);
    s.retry_cnt = static_cast<uint8_t>(cfg.ibRetryCnt);
    s.rnr_retry = 7;  // receiver not ready: retry forever (the receiver is merely slow to repost)
    s.sq_psn = q.psn;
    s.max_rd_atomic = 1;
    rc = v_.modifyQp(
        q.qp, &s,
        IBV_QP_STATE | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY | IBV_QP_SQ_PSN | IBV_QP_MAX_QP_RD_ATOMIC);
    if (rc != 0) return systemError("rdma: QP " + std::to_string(i) + " to RTS with " + where(), rc);
    labels += (i ? "," : "") + std::to_string(q.flowLabel);
    const bool active = paths_->state(static_cast<int>(i)) == mp::PathState::kActive;
    std::string& list = active ? ports : spares;
    list += (list.empty() ? "" : ",") + std::to_string(udpSourcePort(q.flowLabel));
  }
  MYR_LOG(kInfo, kNet, t_->context().rank,
          "rdma: connected to " + where() + ": " + std::to_string(qps_.size()) + " QPs, flow labels " + labels +
              ", udp source ports " + ports + " (active), spare ports " + spares + ", " +
              (paths_->adaptive() ? "adaptive" : "static split"));
  mp::publishTelemetry(paths_->telemetry(t_->context().commTag, t_->context().rank, peer_.rank));
  return Status::ok();
}

}  // namespace myriad
