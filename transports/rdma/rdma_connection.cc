// rdma data path: clear-to-send, RDMA WRITE pieces, WRITE WITH IMMEDIATE completions, all driven from
// poll() (never blocks). Every piece is a WRITE WITH IMMEDIATE, so the receiver sees each piece land (and
// its silence clock restarts) even when one message takes seconds. Bounded: at most kSqDepth WRs
// outstanding per QP and kWindow clear-to-sends ahead of the oldest unfinished receive; a receiver that
// falls behind reposting its receives only slows the sender down (RNR retries are infinite).
#include <arpa/inet.h>
#include <signal.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "base/log.h"
#include "transports/rdma/rdma_transport.h"

namespace myriad {
namespace {
constexpr uint32_t kCtsMagic = 0x5354434d;  // "MCTS"
constexpr int kSqDepth = RdmaConnection::kSqDepth;
constexpr int kRqDepth = RdmaConnection::kRqDepth;
constexpr size_t kSlotBytes = RdmaConnection::kSlotBytes;
constexpr uint32_t kWindow = 32;
constexpr uint64_t kKindWrite = 1, kKindCts = 2, kKindRecv = 3;

uint64_t kindOf(uint64_t wrId) {
  return wrId >> 60;
}
int qpOf(uint64_t wrId) {
  return static_cast<int>((wrId >> 32) & 0xffff);
}
uint32_t low32(uint64_t wrId) {
  return static_cast<uint32_t>(wrId);
}
uint32_t immFor(uint32_t seq, size_t piece) {
  return ((seq & 0xfffff) << 12) | static_cast<uint32_t>(piece & 0xfff);
}
}  // namespace

Status RdmaConnection::postSend(Request* r) {
  MYR_TRY(failed_);
  SendMsg m{};
  m.r = r;
  m.seq = sendSeq_++;
  sends_.push_back(std::move(m));
  if (sends_.size() == 1) noteProgress();
  r->done = false;
  return Status::ok();
}

Status RdmaConnection::postRecv(Request* r) {
  MYR_TRY(failed_);
  RecvMsg m{};
  m.r = r;
  m.seq = recvSeq_++;
  if (r->bytes > 0) {
    auto mr = t_->mrs().acquire(r->buf, r->bytes);
    if (!mr.isOk()) return fail(mr.takeStatus().addContext("receive from " + peer_.describe()));
    m.mr = mr.value();
  }
  if (!busy()) noteProgress();
  recvs_.push_back(m);
  r->done = false;
  return Status::ok();
}

Status RdmaConnection::fail(Status s) {
  if (failed_.isOk()) failed_ = s;
  state_ = State::kFailed;
  return failed_;
}

Status RdmaConnection::poll() {
  if (state_ == State::kFailed) return failed_;
  if (state_ != State::kReady) {
    if (!busy()) return Status::ok();
    Status s = handshake();
    if (!s.isOk()) return fail(s.addContext("rdma: set-up with " + peer_.describe()));
    if (state_ != State::kReady) return Status::ok();
  }
  Status s = pollCq();
  if (s.isOk()) afterCompletions();
  if (s.isOk()) s = postCtsMessages();
  if (s.isOk()) s = postWrites();
  if (!s.isOk()) return fail(std::move(s));
  finishSends();
  finishRecvs();
  return Status::ok();
}

Status RdmaConnection::pollCq() {
  ibv_wc wc[16];
  while (true) {
    int n = ibv_poll_cq(cq_, 16, wc);
    if (n < 0) return Status(Code::kRemoteError, "rdma: ibv_poll_cq failed on the connection to " + where());
    for (int i = 0; i < n; ++i) MYR_TRY(onCompletion(wc[i]));
    if (n < 16) return Status::ok();
  }
}

Status RdmaConnection::wcError(const ibv_wc& wc) const {
  const char* op = kindOf(wc.wr_id) == kKindWrite ? "RDMA WRITE to"
                   : kindOf(wc.wr_id) == kKindCts ? "clear-to-send to"
                                                  : "receive from";
  std::string hint;
  if (wc.status == IBV_WC_RETRY_EXC_ERR)
    hint = "; the peer stopped acknowledging (exited, crashed, or the link is down; MYRIAD_IB_TIMEOUT=" +
           std::to_string(t_->context().config->ibTimeout) +
           " x MYRIAD_IB_RETRY_CNT=" + std::to_string(t_->context().config->ibRetryCnt) + ")";
  return Status(Code::kRemoteError, "rdma: " + std::string(op) + " " + where() + " (QP " +
                                        std::to_string(qpOf(wc.wr_id)) + ") failed: " + v_.wcStatusStr(wc.status) +
                                        " (status " + std::to_string(wc.status) + ", vendor error " +
                                        std::to_string(wc.vendor_err) + ")" + hint);
}

Status RdmaConnection::onCompletion(const ibv_wc& wc) {
  if (wc.status != IBV_WC_SUCCESS) return wcError(wc);
  noteProgress();
  const uint64_t kind = kindOf(wc.wr_id);
  if (kind == kKindCts) {
    --qps_[static_cast<size_t>(qpOf(wc.wr_id))].sqUsed;
    return Status::ok();
  }
  if (kind == kKindWrite) {
    const int q = qpOf(wc.wr_id);
    --qps_[static_cast<size_t>(q)].sqUsed;
    paths_->completed(q, Clock::now());
    const uint32_t seq = low32(wc.wr_id);
    const size_t idx = sends_.empty() ? 0 : seq - sends_.front().seq;
    if (sends_.empty() || idx >= sends_.size())
      return internalError("rdma: completion of an unknown send " + std::to_string(seq));
    --sends_[idx].outstanding;
    return Status::ok();
  }
  const int q = qpOf(wc.wr_id);
  const int slot = static_cast<int>(low32(wc.wr_id));
  if (wc.opcode == IBV_WC_RECV) {
    Cts c;
    std::memcpy(&c, ctl_.data() + (static_cast<size_t>(q) * kRqDepth + static_cast<size_t>(slot)) * kSlotBytes,
                sizeof(c));
    if (wc.byte_len != sizeof(Cts) || c.magic != kCtsMagic)
      return Status(Code::kRemoteError, "rdma: malformed clear-to-send from " + where());
    ctsArrived_[c.seq] = c;
  } else if (wc.opcode == IBV_WC_RECV_RDMA_WITH_IMM) {
    const uint32_t imm = ntohl(wc.imm_data);
    const uint32_t seq20 = imm >> 12;
    bool found = false;
    for (auto& m : recvs_)
      if ((m.seq & 0xfffff) == seq20 && m.ctsSent && m.got < m.expected) {
        ++m.got;
        found = true;
        break;
      }
    if (!found)
      return Status(Code::kRemoteError, "rdma: " + where() + " wrote message " + std::to_string(seq20) + " piece " +
                                            std::to_string(imm & 0xfff) + " that this rank did not expect");
  }
  return postRecvSlot(q, slot);
}

Status RdmaConnection::postCtsMessages() {
  if (recvs_.empty()) return Status::ok();
  const uint32_t limit = recvs_.front().seq + kWindow;
  const int q = paths_->slotAt(0);  // this end's first active QP (the peer counts pieces, not QPs)
  for (auto& m : recvs_) {
    if (m.seq >= limit || qps_[static_cast<size_t>(q)].sqUsed >= kSqDepth) break;
    if (m.ctsSent) continue;
    const int n = static_cast<int>(qps_.size());
    const size_t piece = std::min(pieceBytes_, maxMsg_);
    m.expected = static_cast<int>(pieceCount(m.r->bytes, piece));
    Cts c{kCtsMagic,
          m.seq,
          m.r->tag,
          m.mr ? m.mr->rkey : 0,
          reinterpret_cast<uintptr_t>(m.r->buf),
          m.r->bytes,
          static_cast<uint32_t>(piece),
          0};
    const size_t off = (static_cast<size_t>(n) * kRqDepth + static_cast<size_t>(ctlSendNext_)) * kSlotBytes;
    ctlSendNext_ = (ctlSendNext_ + 1) % kSqDepth;
    std::memcpy(ctl_.data() + off, &c, sizeof(c));
    ibv_sge sge{reinterpret_cast<uintptr_t>(ctl_.data() + off), sizeof(c), ctlMr_->lkey};
    ibv_send_wr wr{};
    wr.wr_id = (kKindCts << 60) | (static_cast<uint64_t>(q) << 32);
    wr.sg_list = &sge;
    wr.num_sge = 1;
    wr.opcode = IBV_WR_SEND;
    wr.send_flags = IBV_SEND_SIGNALED | (static_cast<int>(sizeof(c)) <= maxInline_ ? IBV_SEND_INLINE : 0);
    ibv_send_wr* bad = nullptr;
    int rc = ibv_post_send(qps_[static_cast<size_t>(q)].qp, &wr, &bad);
    if (rc != 0) return systemError("rdma: posting a clear-to-send to " + where(), rc);
    ++qps_[static_cast<size_t>(q)].sqUsed;
    m.ctsSent = true;
  }
  return Status::ok();
}

Status RdmaConnection::postWrites() {
  auto room = [&](int slot) { return qps_[static_cast<size_t>(slot)].sqUsed < kSqDepth; };
  for (auto& m : sends_) {
    if (!m.started) {
      auto it = ctsArrived_.find(m.seq);
      if (it == ctsArrived_.end()) break;  // clear-to-sends arrive in order: later sends have none either
      m.cts = it->second;
      ctsArrived_.erase(it);
      if (m.cts.tag != m.r->tag || m.cts.bytes != m.r->bytes)
        return Status(Code::kInvalidUsage,
                      "rdma: message to " + peer_.describe() + " does not match the peer's receive: it expects " +
                          std::to_string(m.cts.bytes) + " bytes with tag " + std::to_string(m.cts.tag) +
                          ", this rank sends " + std::to_string(m.r->bytes) + " bytes with tag " +
                          std::to_string(m.r->tag) +
                          " (do all ranks issue the same collectives with the same counts?)");
      if (m.cts.pieceBytes == 0 || m.cts.pieceBytes > maxMsg_)
        return Status(Code::kRemoteError, "rdma: " + where() + " asked for pieces of " +
                                              std::to_string(m.cts.pieceBytes) + " bytes (the limit is " +
                                              std::to_string(maxMsg_) + ")");
      if (m.r->bytes > 0) {
        auto mr = t_->mrs().acquire(m.r->buf, m.r->bytes);
        if (!mr.isOk()) return mr.takeStatus().addContext("send to " + peer_.describe());
        m.mr = mr.value();
      }
      m.pieces = pieceCount(m.r->bytes, m.cts.pieceBytes);
      m.posted.assign(m.pieces, false);
      m.started = true;
    }
    // Static: every piece has its QP, so a full QP only holds back its own pieces. Adaptive: in order, to
    // whichever QP pulls; none has room means no later piece can go either.
    for (size_t k = 0; k < m.pieces && m.nposted < m.pieces; ++k) {
      if (m.posted[k]) continue;
      const int slot = paths_->pick(k, m.pieces, m.seq, room);
      if (slot < 0) {
        if (paths_->adaptive()) return Status::ok();
        continue;
      }
      const size_t offset = k * m.cts.pieceBytes;
      const size_t len = pieceLength(m.r->bytes, m.cts.pieceBytes, k);
      ibv_sge sge{};
      ibv_send_wr wr{};
      if (len > 0) {
        sge = {reinterpret_cast<uintptr_t>(m.r->buf) + offset, static_cast<uint32_t>(len), m.mr->lkey};
        wr.sg_list = &sge;
        wr.num_sge = 1;
      }
      wr.wr_id = (kKindWrite << 60) | (static_cast<uint64_t>(slot) << 32) | m.seq;
      wr.opcode = IBV_WR_RDMA_WRITE_WITH_IMM;
      wr.imm_data = htonl(immFor(m.seq, k));
      wr.send_flags = IBV_SEND_SIGNALED;
      wr.wr.rdma.remote_addr = m.cts.addr + offset;
      wr.wr.rdma.rkey = m.cts.rkey;
      ibv_send_wr* bad = nullptr;
      Qp& q = qps_[static_cast<size_t>(slot)];
      int rc = ibv_post_send(q.qp, &wr, &bad);
      if (rc != 0) return systemError("rdma: posting an RDMA WRITE to " + where(), rc);
      paths_->posted(slot, len, Clock::now());
      ++q.sqUsed;
      ++m.outstanding;
      m.posted[k] = true;
      ++m.nposted;
    }
  }
  return Status::ok();
}

void RdmaConnection::afterCompletions() {
  if (!paths_->roundDue()) return;
  const QpPaths::Repath r = paths_->maybeRound(Clock::now());
  const TransportContext& ctx = t_->context();
  if (r.retired >= 0)
    MYR_LOG(kInfo, kNet, ctx.rank,
            "rdma: re-path toward " + peer_.describe() + ": QP " + std::to_string(r.retired) + " (udp port " +
                std::to_string(paths_->port(r.retired)) + ") retired, spare QP " + std::to_string(r.promoted) +
                " (udp port " + std::to_string(paths_->port(r.promoted)) + ") active");
  mp::publishTelemetry(paths_->telemetry(ctx.commTag, ctx.rank, peer_.rank));
}

void RdmaConnection::finishSends() {
  for (auto& m : sends_)
    if (m.started && m.nposted == m.pieces && m.outstanding == 0 && !m.r->done) {
      t_->mrs().release(m.mr);
      m.mr = nullptr;
      m.r->done = true;
    }
  while (!sends_.empty() && sends_.front().r->done) sends_.pop_front();
}

void RdmaConnection::finishRecvs() {
  for (auto& m : recvs_)
    if (m.ctsSent && m.got == m.expected && !m.r->done) {
      t_->mrs().release(m.mr);
      m.mr = nullptr;
      m.r->done = true;
    }
  while (!recvs_.empty() && recvs_.front().r->done) recvs_.pop_front();
}

Status RdmaConnection::checkAlive() {
  if (state_ == State::kFailed) return failed_;
  // A peer on this host that exited is known at once; elsewhere, retries and MYRIAD_TIMEOUT_MS tell.
  if (peer_.pid > 0 && peer_.hostId == t_->selfHostId() && peer_.pidNamespace == t_->selfPidNamespace() &&
      kill(peer_.pid, 0) != 0 && errno == ESRCH)
    return fail(Status(Code::kRemoteError, "rdma: " + peer_.describe() + " exited (its process is gone); talking via " +
                                               t_->device().name() + ":" + std::to_string(t_->device().port())));
  return Status::ok();
}

}  // namespace myriad
