// shm transport: reachability, connection set-up, and the FIFO data path.
#include "transports/shm/shm_transport.h"

#include <signal.h>
#include <sys/mman.h>
#include <sys/uio.h>

#include <cstring>

#include "base/log.h"
#include "exec/reduce.h"
#include "plan/dtype.h"

namespace myriad {
namespace {
// Below this, copying through the FIFO costs less than the syscall and the acknowledgement round trip.
constexpr size_t kAutoCmaMinBytes = 64 << 10;

std::string segmentName(const std::string& commTag, int src, int dst) {
  return "/myr-" + commTag + "-" + std::to_string(src) + "-" + std::to_string(dst);
}
std::string bellName(const std::string& commTag, int rank) {
  return "/myr-" + commTag + "-bell-" + std::to_string(rank);
}
}  // namespace

Result<std::unique_ptr<ShmTransport>> ShmTransport::create(TransportContext ctx) {
  std::unique_ptr<ShmTransport> t(new ShmTransport(std::move(ctx)));
  MYR_TRY(t->hook_.bell.open(bellName(t->ctx_.commTag, t->ctx_.rank), true));
  return t;
}

bool ShmTransport::canReach(const PeerInfo& self, const PeerInfo& peer) const {
  return !ctx_.config->disableShm && self.hostId == peer.hostId && self.pidNamespace == peer.pidNamespace;
}

Result<std::unique_ptr<Connection>> ShmTransport::connect(const PeerInfo& peer) {
  const Config& cfg = *ctx_.config;
  size_t cmaMin = cfg.shmMode == "fifo" ? SIZE_MAX : cfg.shmMode == "cma" ? 1 : kAutoCmaMinBytes;
  auto conn = std::make_unique<ShmConnection>(peer, segmentName(ctx_.commTag, peer.rank, ctx_.rank),
                                              static_cast<uint32_t>(cfg.shmSlots), cfg.shmSlotBytes, cmaMin);
  // Our outbound FIFO exists from now on; the inbound one is attached lazily by poll(), so that two
  // ranks connecting to each other in any order never wait on one another.
  MYR_TRY(conn->createOutbound(segmentName(ctx_.commTag, ctx_.rank, peer.rank)));
  MYR_TRY(conn->peerBell().open(bellName(ctx_.commTag, peer.rank), false));
  conn->setWakeHook(&hook_);
  MYR_LOG(kInfo, kShm, ctx_.rank, "shm: connected to " + peer.describe());
  return std::unique_ptr<Connection>(std::move(conn));
}

ShmConnection::ShmConnection(const PeerInfo& peer, std::string inName, uint32_t slots, size_t slotBytes,
                             size_t cmaMinBytes)
    : Connection(peer),
      inName_(std::move(inName)),
      slots_(slots),
      slotBytes_(slotBytes),
      cmaMinBytes_(cmaMinBytes),
      probe_(0x9e3779b97f4a7c15ULL ^ reinterpret_cast<uintptr_t>(this)) {}

ShmConnection::~ShmConnection() {
  // An abort skips drain(): a receiver that has not attached yet may still need what we published (it may
  // even be in the same collective, whose other ranks finished). The name stays for it to attach and unlink
  // while it lives and its transport is up; a receiver that never attaches unlinks it when its own
  // connection goes, below.
  if (out_.mapped() && !out_.attachedByPeer()) {
    ShmControl* c = out_.control();
    bool unread = c->tail.load(std::memory_order_acquire) != c->head.load(std::memory_order_relaxed);
    if (unread && checkAlive().isOk() && peerBell_.nameExists()) out_.keepName();
  }
  if (!in_.mapped()) shm_unlink(inName_.c_str());
}

Status ShmConnection::createOutbound(const std::string& name) {
  uint64_t probeAddr = cmaMinBytes_ == SIZE_MAX ? 0 : reinterpret_cast<uintptr_t>(&probe_);
  return out_.create(name, slots_, slotBytes_, probeAddr, probe_);
}

Status ShmConnection::postSend(Request* r) {
  return enqueue(sends_, r);
}

Status ShmConnection::postRecv(Request* r) {
  return enqueue(recvs_, r);
}

Status ShmConnection::poll() {
  uint64_t before = moved_;
  Status s = pollSends();
  if (s.isOk()) s = pollRecvs();
  if (moved_ != before) peerBell_.ring();  // once per poll, not per slot
  return s;
}

Status ShmConnection::pollSends() {
  if (sends_.empty() && unacked_.empty()) return Status::ok();
  ShmControl* c = out_.control();
  uint64_t head = c->head.load(std::memory_order_relaxed);
  uint64_t tail = c->tail.load(std::memory_order_acquire);
  while (!unacked_.empty() && tail > unacked_.front().second) {
    unacked_.front().first->done = true;
    unacked_.pop_front();
    moved();
  }
  bool cma = c->cma.load(std::memory_order_acquire) == CmaState::kAllowed;
  while (!sends_.empty() && head - tail < slots_) {
    Request* r = sends_.front();
    ShmSlotHeader* h = out_.slotHeader(head);
    h->msgBytes = r->bytes;
    h->tag = r->tag;
    if (cma && sendOffset_ == 0 && r->bytes >= cmaMinBytes_) {
      // The receiver reads the message from our memory; it is done when the receiver's tail passes it.
      h->kind = ShmSlotKind::kRemote;
      h->offset = 0;
      h->pieceBytes = 0;
      h->remoteAddr = reinterpret_cast<uintptr_t>(r->buf);
      unacked_.emplace_back(r, head);
      sends_.pop_front();
      c->head.store(++head, std::memory_order_release);
      moved();
      continue;
    }
    size_t piece = std::min(slotBytes_, r->bytes - sendOffset_);
    h->kind = ShmSlotKind::kInline;
    h->offset = sendOffset_;
    h->pieceBytes = piece;
    if (piece) std::memcpy(out_.slotData(head), static_cast<const uint8_t*>(r->buf) + sendOffset_, piece);
    c->head.store(++head, std::memory_order_release);
    sendOffset_ += piece;
    moved();
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
    probeCma();
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
    if (h->kind == ShmSlotKind::kRemote) {
      MYR_TRY(readRemote(r, h));
      recvOffset_ = r->bytes;
      ++cmaReads_;
      cmaBytes_ += r->bytes;
    } else {
      if (h->pieceBytes) deliver(r, recvOffset_, in_.slotData(tail), h->pieceBytes);
      recvOffset_ += h->pieceBytes;
      fifoBytes_ += h->pieceBytes;
    }
    c->tail.store(++tail, std::memory_order_release);
    moved();
    if (recvOffset_ == r->bytes) {
      r->done = true;
      recvs_.pop_front();
      recvOffset_ = 0;
    }
    if (tail == head) head = c->head.load(std::memory_order_acquire);
  }
  return Status::ok();
}

void ShmConnection::probeCma() {
  ShmControl* c = in_.control();
  if (c->probeAddr == 0 || c->cma.load(std::memory_order_acquire) != CmaState::kUnknown) return;
  uint64_t value = 0;
  iovec local{&value, sizeof(value)};
  iovec remote{reinterpret_cast<void*>(c->probeAddr), sizeof(value)};
  ssize_t n = process_vm_readv(peer_.pid, &local, 1, &remote, 1, 0);
  bool ok = n == sizeof(value) && value == c->probeValue;
  if (!ok)
    MYR_LOG(kInfo, kShm, -1,
            "shm: single-copy reads from " + peer_.describe() + " are not permitted (" +
                (n < 0 ? std::string(strerror(errno)) : std::string("short read")) + "); using the FIFO");
  c->cma.store(ok ? CmaState::kAllowed : CmaState::kDenied, std::memory_order_release);
}

void ShmConnection::deliver(Request* r, size_t offset, const void* src, size_t bytes) {
  uint8_t* dst = static_cast<uint8_t*>(r->buf) + offset;
  if (!r->combine.with) {
    std::memcpy(dst, src, bytes);
    return;
  }
  const Combine& c = r->combine;
  reduce(dst, src, static_cast<const uint8_t*>(c.with) + offset, bytes / dtypeSize(c.dtype), c.dtype, c.op);
}

Status ShmConnection::readRemote(Request* r, const ShmSlotHeader* h) {
  if (!r->combine.with) return readRemoteInto(r->buf, h->remoteAddr, r->bytes);
  // Combined: one slot's worth at a time into the bounce buffer, reduced from there while it is in cache.
  if (bounce_.empty()) bounce_.resize(slotBytes_);
  for (size_t done = 0; done < r->bytes; done += slotBytes_) {
    size_t piece = std::min(slotBytes_, r->bytes - done);
    MYR_TRY(readRemoteInto(bounce_.data(), h->remoteAddr + done, piece));
    deliver(r, done, bounce_.data(), piece);
  }
  return Status::ok();
}

Status ShmConnection::readRemoteInto(void* local, uint64_t remoteAddr, size_t bytes) {
  size_t done = 0;
  while (done < bytes) {
    iovec to{static_cast<uint8_t*>(local) + done, bytes - done};
    iovec from{reinterpret_cast<void*>(remoteAddr + done), bytes - done};
    ssize_t n = process_vm_readv(peer_.pid, &to, 1, &from, 1, 0);
    if (n > 0) {
      done += static_cast<size_t>(n);
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && errno == ESRCH)
      return Status(Code::kRemoteError, "shm: " + peer_.describe() + " exited while this rank read its message");
    return systemError("shm: process_vm_readv from " + peer_.describe(), n < 0 ? errno : EFAULT);
  }
  return Status::ok();
}

std::string ShmConnection::describe() const {
  const char* ours = "not asked yet";
  if (out_.mapped()) {
    switch (out_.control()->cma.load(std::memory_order_acquire)) {
      case CmaState::kAllowed: ours = "allowed"; break;
      case CmaState::kDenied: ours = "denied (the peer uses the FIFO)"; break;
      default: break;
    }
  }
  return "shm: received " + std::to_string(fifoBytes_) + " B through the FIFO and " + std::to_string(cmaBytes_) +
         " B in " + std::to_string(cmaReads_) +
         " single-copy reads (process_vm_readv); the peer's reads of ours: " + ours;
}

bool ShmConnection::drainStep() {
  // The outbound FIFO's name disappears with this connection: done once the peer has attached and consumed
  // every slot (it then holds its own mapping), or has exited.
  if (!out_.mapped()) return true;
  ShmControl* c = out_.control();
  if (c->tail.load(std::memory_order_acquire) == c->head.load(std::memory_order_relaxed)) return true;
  if (!checkAlive().isOk()) {
    MYR_LOG(kWarn, kShm, -1, "shm: destroyed with messages to " + peer_.describe() + " still unread (it has exited)");
    return true;
  }
  peerBell_.ring();
  return false;
}

Status ShmConnection::checkAlive() {
  if (kill(peer_.pid, 0) != 0 && errno == ESRCH)
    return Status(Code::kRemoteError,
                  "shm: " + peer_.describe() + " on " + peer_.hostname + " has exited (process no longer exists)");
  return Status::ok();
}

}  // namespace myriad
