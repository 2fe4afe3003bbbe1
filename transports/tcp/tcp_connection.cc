// tcp data path: one frame per message, header {magic, tag, bytes} then the payload, sent with sendmsg
// from the user's buffer and received straight into it. Never blocks; EAGAIN ends a poll.
#include <sys/socket.h>
#include <sys/uio.h>

#include <cstring>

#include "base/log.h"
#include "transports/tcp/tcp_transport.h"

namespace myriad {
namespace {
constexpr uint32_t kFrameMagic = 0x4446594d;  // "MYFD"
bool wouldBlock(int err) {
  return err == EAGAIN || err == EWOULDBLOCK || err == EINTR;
}
}  // namespace

Status TcpConnection::postSend(Request* r) {
  return enqueue(sends_, r);
}

Status TcpConnection::postRecv(Request* r) {
  return enqueue(recvs_, r);
}

Status TcpConnection::ioError(const char* what, int err) const {
  if (err == 0)
    return Status(Code::kRemoteError, std::string("tcp: ") + what + " " + peer_.describe() +
                                          ": connection closed by the peer (did it exit or fail?)");
  Status s = systemError(std::string("tcp: ") + what + " " + peer_.describe() + " at " + peer_.tcpAddr.toString(), err);
  if (err == ECONNRESET || err == EPIPE || err == ETIMEDOUT || err == EHOSTUNREACH)
    return Status(Code::kRemoteError, s.message());
  return s;
}

Status TcpConnection::poll() {
  if (fd_.get() < 0) {
    if (!busy()) return Status::ok();
    MYR_ASSIGN_OR_RETURN(int fd, transport_->takeAccepted(peer_.rank));
    if (fd < 0) return Status::ok();
    fd_ = Fd(fd);
    noteProgress();
  }
  if (hello_) {
    MYR_TRY(
        hello_->step(fd_.get()).addContext("tcp: hello to " + peer_.describe() + " at " + peer_.tcpAddr.toString()));
    if (!hello_->done()) return Status::ok();
    hello_.reset();
    noteProgress();
  }
  MYR_TRY(pollSends());
  return pollRecvs();
}

Status TcpConnection::pollSends() {
  while (!sends_.empty()) {
    Request* r = sends_.front();
    if (sendDone_ == 0) sendHeader_ = Header{kFrameMagic, r->tag, r->bytes};
    iovec iov[2];
    int n = 0;
    if (sendDone_ < sizeof(Header)) {
      iov[n++] = {reinterpret_cast<uint8_t*>(&sendHeader_) + sendDone_, sizeof(Header) - sendDone_};
      if (r->bytes) iov[n++] = {r->buf, r->bytes};
    } else {
      size_t off = sendDone_ - sizeof(Header);
      iov[n++] = {static_cast<uint8_t*>(r->buf) + off, r->bytes - off};
    }
    msghdr msg{};
    msg.msg_iov = iov;
    msg.msg_iovlen = static_cast<size_t>(n);
    ssize_t k = sendmsg(fd_.get(), &msg, MSG_DONTWAIT | MSG_NOSIGNAL);
    if (k < 0) {
      if (wouldBlock(errno)) return Status::ok();
      return ioError("send to", errno);
    }
    sendDone_ += static_cast<size_t>(k);
    noteProgress();
    if (sendDone_ < sizeof(Header) + r->bytes) return Status::ok();  // the socket buffer is full
    r->done = true;
    sends_.pop_front();
    sendDone_ = 0;
  }
  return Status::ok();
}

Status TcpConnection::pollRecvs() {
  while (!recvs_.empty()) {
    Request* r = recvs_.front();
    if (recvDone_ < sizeof(Header)) {
      ssize_t k = recv(fd_.get(), reinterpret_cast<uint8_t*>(&recvHeader_) + recvDone_, sizeof(Header) - recvDone_,
                       MSG_DONTWAIT);
      if (k == 0) return ioError("recv from", 0);
      if (k < 0) return wouldBlock(errno) ? Status::ok() : ioError("recv from", errno);
      recvDone_ += static_cast<size_t>(k);
      noteProgress();
      if (recvDone_ < sizeof(Header)) continue;
      if (recvHeader_.magic != kFrameMagic)
        return Status(Code::kRemoteError, "tcp: malformed frame from " + peer_.describe());
      if (recvHeader_.tag != r->tag || recvHeader_.bytes != r->bytes)
        return Status(Code::kInvalidUsage,
                      "tcp: message from " + peer_.describe() + " does not match this rank's call: got " +
                          std::to_string(recvHeader_.bytes) + " bytes with tag " + std::to_string(recvHeader_.tag) +
                          ", expected " + std::to_string(r->bytes) + " bytes with tag " + std::to_string(r->tag) +
                          " (do all ranks issue the same collectives with the same counts?)");
    }
    size_t off = recvDone_ - sizeof(Header);
    if (off < r->bytes) {
      ssize_t k = recv(fd_.get(), static_cast<uint8_t*>(r->buf) + off, r->bytes - off, MSG_DONTWAIT);
      if (k == 0) return ioError("recv from", 0);
      if (k < 0) return wouldBlock(errno) ? Status::ok() : ioError("recv from", errno);
      recvDone_ += static_cast<size_t>(k);
      noteProgress();
      if (recvDone_ < sizeof(Header) + r->bytes) continue;
    }
    r->done = true;
    recvs_.pop_front();
    recvDone_ = 0;
  }
  return Status::ok();
}

Status TcpConnection::checkAlive() {
  if (fd_.get() < 0 || hello_) return Status::ok();  // not accepted yet: the silence deadline covers it
  char b;
  ssize_t k = recv(fd_.get(), &b, 1, MSG_PEEK | MSG_DONTWAIT);
  if (k == 0) return ioError("connection to", 0);
  if (k < 0 && !wouldBlock(errno)) return ioError("connection to", errno);
  return Status::ok();
}

}  // namespace myriad
