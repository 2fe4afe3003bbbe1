// tcp lanes (see tcp_lane.h): non-blocking connect from a bound port, frame writer and reader.
#include "transports/tcp/tcp_lane.h"

#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/uio.h>

#include <algorithm>
#include <cstring>

#include "transports/tcp/tcp_transport.h"

namespace myriad {
namespace {
constexpr size_t kReadBudget = size_t{4} << 20;  // per poll, so one lane does not starve the others
constexpr size_t kRxBytes = 64 << 10;            // the read buffer of headers and small payloads
constexpr size_t kWriteFrames = 16;              // frames gathered into one sendmsg
bool wouldBlock(int err) {
  return err == EAGAIN || err == EWOULDBLOCK || err == EINTR;
}
}  // namespace

TcpLane::TcpLane(int fd, uint16_t port, bool connecting, std::unique_ptr<Handshake> hello, std::string peer,
                 Status pending)
    : fd_(fd),
      port_(port),
      connecting_(connecting),
      hello_(std::move(hello)),
      peer_(std::move(peer)),
      pending_(std::move(pending)) {}

Status TcpLane::ioError(const char* what, int err) const {
  if (err == 0)
    return Status(Code::kRemoteError, std::string("tcp: ") + what + " " + peer_ + " (path from port " +
                                          std::to_string(port_) + "): connection closed by the peer");
  return systemError(std::string("tcp: ") + what + " " + peer_ + " (path from port " + std::to_string(port_) + ")",
                     err);
}

void TcpLane::postData(const mp::FrameHeader& h, const void* payload) {
  out_.push_back(Out{h, static_cast<const uint8_t*>(payload), 0, {}, false});
  ++dataQueued_;
}

void TcpLane::postControl(const mp::FrameHeader& h) {
  out_.push_back(Out{h, nullptr, 0, {}, false});
}

bool TcpLane::cancel(uint64_t op, uint32_t index) {
  for (auto it = out_.begin(); it != out_.end(); ++it) {
    if (it->h.kind != mp::FrameHeader::kData || it->h.op != op || it->h.index != index) continue;
    if (it->done == 0) {
      out_.erase(it);
      --dataQueued_;
      return true;
    }
    if (!it->released) {  // begun: the stream needs the rest, from our own copy
      it->owned.assign(it->payload, it->payload + it->h.length);
      it->payload = it->owned.data();
      it->released = true;
    }
    return false;
  }
  return false;
}

bool TcpLane::holds(uint64_t op) const {
  for (const Out& o : out_)
    if (mp::carriesData(o.h.kind) && o.h.op == op && !o.released) return true;
  return false;
}

Status TcpLane::finishConnect() {
  pollfd p{fd_.get(), POLLOUT, 0};
  int n = ::poll(&p, 1, 0);
  if (n == 0) return Status::ok();
  if (n < 0) return wouldBlock(errno) ? Status::ok() : systemError("tcp: poll", errno);
  int err = 0;
  socklen_t len = sizeof(err);
  getsockopt(fd_.get(), SOL_SOCKET, SO_ERROR, &err, &len);
  if (err != 0) return ioError("connect to", err);
  connecting_ = false;
  return Status::ok();
}

Status TcpLane::write() {
  if (hello_) {
    Status s = hello_->step(fd_.get());
    if (!s.isOk())
      return Status(s.code(),
                    "tcp: hello to " + peer_ + " (path from port " + std::to_string(port_) + "): " + s.message());
    if (!hello_->done()) return Status::ok();
    hello_.reset();
  }
  // Queued frames leave together, up to kWriteFrames per sendmsg: a poll's acks cost one system call (and
  // with TCP_NODELAY one segment), not one each.
  while (!out_.empty()) {
    const size_t hb = sizeof(mp::FrameHeader);
    iovec iov[2 * kWriteFrames];
    int n = 0;
    for (size_t i = 0; i < out_.size() && i < kWriteFrames; ++i) {
      Out& o = out_[i];
      const size_t pb = o.bytes() - hb;
      if (o.done < hb) iov[n++] = {reinterpret_cast<uint8_t*>(&o.h) + o.done, hb - o.done};
      const size_t from = o.done > hb ? o.done - hb : 0;
      if (pb > from) iov[n++] = {const_cast<uint8_t*>(o.payload) + from, pb - from};
    }
    msghdr msg{};
    msg.msg_iov = iov;
    msg.msg_iovlen = static_cast<size_t>(n);
    ssize_t k = sendmsg(fd_.get(), &msg, MSG_DONTWAIT | MSG_NOSIGNAL);
    if (k <= 0) return k == 0 || wouldBlock(errno) ? Status::ok() : ioError("send to", errno);
    for (size_t left = static_cast<size_t>(k); left > 0;) {
      Out& o = out_.front();
      const size_t rest = o.bytes() - o.done;
      if (left < rest) {
        o.done += left;
        return Status::ok();  // the socket buffer is full
      }
      left -= rest;
      if (mp::carriesData(o.h.kind)) --dataQueued_;
      out_.pop_front();
    }
  }
  return Status::ok();
}

// Headers, acks and small payloads are read a buffer at a time (one recv(2) usually brings a whole small
// message, and a short one says the socket is empty, so no recv ends in EAGAIN); a large payload is read
// straight into its place. While large chunks arrive, only a header is read at a time, so that their
// payload is copied once, by the kernel, into its place.
Status TcpLane::fill(bool* drained) {
  if (rxPos_ > 0) {
    std::memmove(rx_.data(), rx_.data() + rxPos_, rxEnd_ - rxPos_);
    rxEnd_ -= rxPos_;
    rxPos_ = 0;
  }
  if (rx_.empty()) rx_.resize(kRxBytes);
  const size_t want = bigFrames_ && rxEnd_ < sizeof(in_) ? sizeof(in_) - rxEnd_ : rx_.size() - rxEnd_;
  ssize_t k = recv(fd_.get(), rx_.data() + rxEnd_, want, MSG_DONTWAIT);
  if (k == 0) return ioError("recv from", 0);
  if (k < 0) {
    if (!wouldBlock(errno)) return ioError("recv from", errno);
    *drained = true;
    return Status::ok();
  }
  rxEnd_ += static_cast<size_t>(k);
  *drained = static_cast<size_t>(k) < want;
  return Status::ok();
}

Status TcpLane::read(mp::LaneEvents& ev) {
  if (hello_) return Status::ok();  // the hello's bytes are its own (write() runs it)
  size_t budget = kReadBudget;
  bool drained = false;
  while (budget > 0 && !bye) {
    if (!inPayload_) {
      if (rxEnd_ - rxPos_ < sizeof(in_)) {
        if (drained) return Status::ok();
        MYR_TRY(fill(&drained));
        continue;
      }
      std::memcpy(&in_, rx_.data() + rxPos_, sizeof(in_));
      rxPos_ += sizeof(in_);
      if (in_.magic != mp::FrameHeader::kMagic) return Status(Code::kRemoteError, "tcp: malformed frame from " + peer_);
      if (mp::isAckKind(in_.kind)) {
        ev.ackArrived(*this, in_);
        continue;
      }
      if (in_.kind == mp::FrameHeader::kBye) {
        bye = true;
        ev.byeArrived(*this);
        return Status::ok();
      }
      if (!mp::carriesData(in_.kind)) return Status(Code::kRemoteError, "tcp: malformed frame from " + peer_);
      bigFrames_ = in_.length > kRxBytes / 4;
      place_ = ev.placeChunk(*this, in_);
      payloadGot_ = 0;
      if (in_.length == 0) {
        ev.chunkArrived(*this, in_, !place_.discard);
        continue;
      }
      inPayload_ = true;
    }
    const uint64_t left = in_.length - payloadGot_;
    if (rxPos_ < rxEnd_) {  // what the buffer holds of the payload
      const size_t n = static_cast<size_t>(std::min<uint64_t>(left, rxEnd_ - rxPos_));
      if (!place_.discard) std::memcpy(place_.dst + payloadGot_, rx_.data() + rxPos_, n);
      rxPos_ += n;
      payloadGot_ += n;
      budget -= std::min(budget, n);
    } else if (drained) {
      return Status::ok();
    } else if (left <= kRxBytes / 4) {  // the rest of a small payload, and whatever follows it
      MYR_TRY(fill(&drained));
      continue;
    } else {
      uint8_t* dst;
      size_t want;
      if (place_.discard) {
        if (scratch_.empty()) scratch_.resize(64 << 10);
        dst = scratch_.data();
        want = static_cast<size_t>(std::min<uint64_t>(left, scratch_.size()));
      } else {
        dst = place_.dst + payloadGot_;
        want = static_cast<size_t>(std::min<uint64_t>(left, budget));
      }
      ssize_t k = recv(fd_.get(), dst, want, MSG_DONTWAIT);
      if (k == 0) return ioError("recv from", 0);
      if (k < 0) return wouldBlock(errno) ? Status::ok() : ioError("recv from", errno);
      drained = static_cast<size_t>(k) < want;
      payloadGot_ += static_cast<uint64_t>(k);
      budget -= std::min(budget, static_cast<size_t>(k));
    }
    if (payloadGot_ < in_.length) continue;
    inPayload_ = false;
    ev.chunkArrived(*this, in_, !place_.discard);
  }
  return Status::ok();
}

void TcpLane::flush() {
  if (ready() && pending_.isOk()) write().ignore();
}

mp::Delivery TcpLane::delivery() const {
  const std::optional<tcp_info> info = tcpInfo();
  if (!info) return mp::Delivery::kUnknown;
  const tcp_info& ti = *info;
  // Two retransmission timeouts of the path as measured (srtt + 4 rttvar, at least the kernel's 200 ms), not
  // tcpi_rto: that one doubles at each timeout of a dead path, so that the silence would never catch up with it.
  const uint32_t rtoMs = std::max<uint32_t>(200, (ti.tcpi_rtt + 4 * ti.tcpi_rttvar) / 1000);
  const uint32_t quietMs = std::max<uint32_t>(500, 2 * rtoMs);
  return ti.tcpi_unacked > 0 && ti.tcpi_last_ack_recv > quietMs ? mp::Delivery::kStuck : mp::Delivery::kDelivering;
}

// The kernel's own view of the flow: retransmitted segments so far, smoothed round trip, segment size.
std::optional<mp::Congestion> TcpLane::congestion() const {
  const std::optional<tcp_info> ti = tcpInfo();
  if (!ti) return std::nullopt;
  return mp::Congestion{ti->tcpi_total_retrans, ti->tcpi_rtt / 1e6, static_cast<double>(ti->tcpi_snd_mss)};
}

// The kernel's TCP_INFO for the lane's socket, once it is connected.
std::optional<tcp_info> TcpLane::tcpInfo() const {
  if (!ready()) return std::nullopt;
  tcp_info ti{};
  socklen_t len = sizeof(ti);
  if (getsockopt(fd_.get(), IPPROTO_TCP, TCP_INFO, &ti, &len) != 0) return std::nullopt;
  return ti;
}

Status TcpLane::poll(mp::LaneEvents& ev, bool readable) {
  if (!pending_.isOk()) return pending_;
  if (connecting_) {
    MYR_TRY(finishConnect());
    if (connecting_) return Status::ok();
  }
  MYR_TRY(write());
  if (!readable && rxPos_ == rxEnd_) return Status::ok();
  MYR_TRY(read(ev));
  return write();
}

Result<std::unique_ptr<mp::Lane>> TcpLaneFactory::open(uint16_t port) {
  SockAddr local = transport_->selfAddress();
  local.setPort(port);
  Fd fd(socket(peer_.tcpAddr.family(), SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0));
  if (fd.get() < 0) return systemError("tcp: socket", errno);
  int one = 1;
  setsockopt(fd.get(), SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
  if (bind(fd.get(), reinterpret_cast<const sockaddr*>(&local.ss), local.len) != 0) {
    if (errno == EADDRINUSE || errno == EACCES) return std::unique_ptr<mp::Lane>();
    return systemError("tcp: bind to " + local.toString(), errno);
  }
  MYR_TRY(transport_->tuneSocket(fd.get()));
  Status pending;
  if (connect(fd.get(), reinterpret_cast<const sockaddr*>(&peer_.tcpAddr.ss), peer_.tcpAddr.len) != 0 &&
      errno != EINPROGRESS)
    pending = systemError("tcp: connect to " + peer_.describe() + " at " + peer_.tcpAddr.toString(), errno);
  return std::unique_ptr<mp::Lane>(new TcpLane(fd.release(), port, true, transport_->openHello(peer_.rank, true),
                                               peer_.describe(), std::move(pending)));
}

Result<std::unique_ptr<mp::Lane>> TcpLaneFactory::accept() {
  MYR_ASSIGN_OR_RETURN(int fd, transport_->takeLane(peer_.rank));
  if (fd < 0) return std::unique_ptr<mp::Lane>();
  SockAddr from;
  from.len = sizeof(from.ss);
  getpeername(fd, reinterpret_cast<sockaddr*>(&from.ss), &from.len);
  return std::unique_ptr<mp::Lane>(new TcpLane(fd, from.port(), false, nullptr, peer_.describe(), Status::ok()));
}

bool TcpLaneFactory::peerGone(const Status& laneError) const {
  return laneError.message().find("refused") != std::string::npos;
}

}  // namespace myriad
