// shm transport: reachability, connection set-up, and the FIFO data path.
#include "transports/shm/shm_transport.h"

#include <signal.h>

#include <cstring>

#include "core/log.h"

namespace myriad {
namespace {
std::string segmentName(const std::string& commTag, int src, int dst) {
  return "/myr-" + commTag + "-" + std::to_string(src) + "-" + std::to_string(dst);
}
}  // namespace

bool ShmTransport::canReach(const PeerInfo& self, const PeerInfo& peer) const {
  return !ctx_.config->disableShm && self.hostId == peer.hostId && self.pidNamespace == peer.pidNamespace;
}

Result<std::unique_ptr<Connection>> ShmTransport::connect(const PeerInfo& peer) {
  const Config& cfg = *ctx_.config;
  auto conn = std::make_unique<ShmConnection>(peer, segmentName(ctx_.commTag, peer.rank, ctx_.rank),
                                              static_cast<uint32_t>(cfg.shmSlots), cfg.shmSlotBytes);
  // Our outbound FIFO exists from now on; the inbound one is attached lazily by poll(), so that two
  // ranks connecting to each other in any order never wait on one another.
  MYR_TRY(conn->outbound().create(segmentName(ctx_.commTag, ctx_.rank, peer.rank), static_cast<uint32_t>(cfg.shmSlots),
                                  cfg.shmSlotBytes));
  MYR_LOG(kInfo, kShm, ctx_.rank, "shm: connected to " + peer.describe());
  return std::unique_ptr<Connection>(std::move(conn));
}

Status ShmConnection::postSend(Request* r) {
  if (!busy()) noteProgress();
  r->done = false;
  sends_.push_back(r);
  return Status::ok();
}

Status ShmConnection::postRecv(Request* r) {
  if (!busy()) noteProgress();
  r->done = false;
  recvs_.push_back(r);
  return Status::ok();
}

Status ShmConnection::poll() {
  MYR_TRY(pollSends());
  return pollRecvs();
}

Status ShmConnection::pollSends() {
  if (sends_.empty()) return Status::ok();
  ShmControl* c = out_.control();
  uint64_t head = c->head.load(std::memory_order_relaxed);
  uint64_t tail = c->tail.load(std::memory_order_acquire);
  while (!sends_.empty() && head - tail < slots_) {
    Request* r = sends_.front();
    size_t piece = std::min(slotBytes_, r->bytes - sendOffset_);
    ShmSlotHeader* h = out_.slotHeader(head);
    h->msgBytes = r->bytes;
    h->offset = sendOffset_;
    h->pieceBytes = piece;
    h->tag = r->tag;
    if (piece) std::memcpy(out_.slotData(head), static_cast<const uint8_t*>(r->buf) + sendOffset_, piece);
    c->head.store(++head, std::memory_order_release);
    sendOffset_ += piece;
    noteProgress();
    if (sendOffset_ == r->bytes) {
      r->done = true;
      sends_.pop_front();
      sendOffset_ = 0;
    }
    if (head - tail >= slots_) tail = c->tail.load(std::memory_order_acquire);
  }
  return Status::ok();
}

Status ShmConnection::pollRecvs() {
  if (recvs_.empty()) return Status::ok();
  if (!in_.mapped()) {
    Status s = in_.attach(inName_, slots_, slotBytes_);
    if (s.code() == Code::kNotSupported) return Status::ok();  // the peer has not connected yet
    MYR_TRY(s.addContext("shm: attach FIFO from " + peer_.describe()));
  }
  ShmControl* c = in_.control();
  uint64_t tail = c->tail.load(std::memory_order_relaxed);
  uint64_t head = c->head.load(std::memory_order_acquire);
  while (!recvs_.empty() && tail < head) {
    Request* r = recvs_.front();
    const ShmSlotHeader* h = in_.slotHeader(tail);
    if (h->tag != r->tag || h->msgBytes != r->bytes || h->offset != recvOffset_)
      return Status(Code::kInvalidUsage, "shm: message from " + peer_.describe() +
                                             " does not match this rank's call: got " + std::to_string(h->msgBytes) +
                                             " bytes with tag " + std::to_string(h->tag) + ", expected " +
                                             std::to_string(r->bytes) + " bytes with tag " + std::to_string(r->tag) +
                                             " (do all ranks issue the same collectives with the same counts?)");
    if (h->pieceBytes) std::memcpy(static_cast<uint8_t*>(r->buf) + recvOffset_, in_.slotData(tail), h->pieceBytes);
    recvOffset_ += h->pieceBytes;
    c->tail.store(++tail, std::memory_order_release);
    noteProgress();
    if (recvOffset_ == r->bytes) {
      r->done = true;
      recvs_.pop_front();
      recvOffset_ = 0;
    }
    if (tail == head) head = c->head.load(std::memory_order_acquire);
  }
  return Status::ok();
}

Status ShmConnection::checkAlive() {
  if (kill(peer_.pid, 0) != 0 && errno == ESRCH)
    return Status(Code::kRemoteError,
                  "shm: " + peer_.describe() + " on " + peer_.hostname + " has exited (process no longer exists)");
  return Status::ok();
}

}  // namespace myriad
