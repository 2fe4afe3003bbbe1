// tcp lanes of a path set: each is a non-blocking socket; an outgoing one is bound to the path's chosen
// source port (so ECMP hashes it to a spine of our choosing) and opens with a lane hello, an incoming one
// was accepted by the transport. Frames are mp::FrameHeader then the payload, written with sendmsg from the
// sender's memory and read straight into the receiver's.
#pragma once

#include <netinet/tcp.h>

#include <deque>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "base/hello.h"
#include "base/socket.h"
#include "rendezvous/peer_info.h"
#include "transports/multipath/lane.h"

namespace myriad {

class TcpTransport;

class TcpLane final : public mp::Lane {
 public:
  // fd: connecting (outgoing, `hello` run to the end once connected, before any frame) or accepted
  // (incoming, hello done by the transport: null). A non-ok `pending` is reported by the first poll.
  TcpLane(int fd, uint16_t port, bool connecting, std::unique_ptr<Handshake> hello, std::string peer, Status pending);
  uint16_t port() const override { return port_; }
  bool ready() const override { return !connecting_ && !hello_; }
  bool canPost() const override { return ready() && dataQueued_ < 2; }
  void postData(const mp::FrameHeader& h, const void* payload) override;
  void postControl(const mp::FrameHeader& h) override;
  bool cancel(uint64_t op, uint32_t index) override;
  bool holds(uint64_t op) const override;
  bool flushed() const override { return out_.empty() && !hello_; }
  Status poll(mp::LaneEvents& events, bool readable = true) override;
  void flush() override;
  // kStuck: bytes are unacknowledged and the kernel has heard no ack for max(0.5 s, 2 RTOs), the RTO from the
  // measured round trip (not tcpi_rto, which doubles with each timeout of a dead path).
  mp::Delivery delivery() const override;
  std::optional<mp::Congestion> congestion() const override;
  void discardRest() override { place_.discard = true; }
  int fd() const override { return ready() && pending_.isOk() ? fd_.get() : -1; }
  bool hasBufferedInput() const override { return rxPos_ < rxEnd_; }

 private:
  std::optional<tcp_info> tcpInfo() const;
  struct Out {
    mp::FrameHeader h;
    const uint8_t* payload;
    size_t done;                 // bytes of header + payload written
    std::vector<uint8_t> owned;  // the payload, copied when the frame was cancelled mid-write (cancel)
    bool released = false;       // cancelled mid-write: the caller's buffer is no longer read
    size_t bytes() const { return sizeof(mp::FrameHeader) + (mp::carriesData(h.kind) ? h.length : 0); }
  };
  Status finishConnect();
  Status write();
  Status read(mp::LaneEvents& events);
  Status fill(bool* drained);
  Status ioError(const char* what, int err) const;

  Fd fd_;
  uint16_t port_;
  bool connecting_;
  std::unique_ptr<Handshake> hello_;
  std::deque<Out> out_;
  int dataQueued_ = 0;
  std::string peer_;
  Status pending_;
  mp::FrameHeader in_{};
  std::vector<uint8_t> rx_;  // read buffer: bytes [rxPos_, rxEnd_) are read from the socket, not yet parsed
  size_t rxPos_ = 0, rxEnd_ = 0;
  bool bigFrames_ = false;  // the last data frame was a large chunk: read headers alone
  bool inPayload_ = false;
  mp::Placement place_;
  uint64_t payloadGot_ = 0;
  std::vector<uint8_t> scratch_;
};

class TcpLaneFactory final : public mp::LaneFactory {
 public:
  TcpLaneFactory(TcpTransport* transport, const PeerInfo& peer) : transport_(transport), peer_(peer) {}
  Result<std::unique_ptr<mp::Lane>> open(uint16_t port) override;
  Result<std::unique_ptr<mp::Lane>> accept() override;
  bool peerGone(const Status& laneError) const override;

 private:
  TcpTransport* transport_;
  PeerInfo peer_;
};

}  // namespace myriad
