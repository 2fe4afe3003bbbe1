// tcp: the transport that reaches every peer. One listener per communicator; the lower rank of a pair
// connects and opens with the challenge-response hello (base/hello.h; ident: kind, both ranks; the key is
// derived from the communicator's secret and tag), the higher rank accepts and answers lazily from poll(),
// so connection set-up never waits on the peer's thread: the opener finishes its side from its own poll().
// Unauthenticated or malformed connections are dropped and logged. With MYRIAD_NET_PATHS=1 the data path is one
// non-blocking socket per pair, one frame per message: header {magic, tag, bytes} then the payload, written and read
// straight from the user's buffer. With more paths, each rank opens its own lanes (tcp_lane.h) to the peer, from chosen
// source ports, with a lane hello, and a MultipathConnection (transports/multipath) drives them.
#pragma once

#include <deque>
#include <map>
#include <memory>
#include <vector>

#include "base/hello.h"
#include "base/socket.h"
#include "core/transport.h"

namespace myriad {

class TcpTransport final : public Transport {
 public:
  // Opens the listener on the configured interface; self->tcpAddr receives its address.
  static Result<std::unique_ptr<TcpTransport>> create(TransportContext ctx, PeerInfo* self);
  const char* name() const override { return "tcp"; }
  bool canReach(const PeerInfo&, const PeerInfo&) const override { return true; }
  Result<std::unique_ptr<Connection>> connect(const PeerInfo& peer) override;
  std::string telemetry() const override;

  // Never blocks: the authenticated socket that `rank` opened to us, or -1 for not yet.
  Result<int> takeAccepted(int rank);
  // Never blocks: the next authenticated lane socket `rank` opened to us, or -1.
  Result<int> takeLane(int rank);
  // The opener's side of the hello of a connection (lane: one lane of a path set) toward `peer`.
  std::unique_ptr<Handshake> openHello(int peer, bool lane) const;
  const SockAddr& selfAddress() const { return self_; }
  Status tuneSocket(int fd) const;

 private:
  struct Pending {
    Fd fd;
    std::string from;
    Clock::time_point since;
    std::unique_ptr<Handshake> hello;
  };
  explicit TcpTransport(TransportContext ctx) : ctx_(std::move(ctx)) {}
  void acceptNew();  // at most every kAcceptEvery: every poll of every lane set comes through here
  void readHellos();

  TransportContext ctx_;
  auth::Key helloKey_{};
  Fd listen_;
  std::vector<Pending> pending_;
  std::map<int, Fd> ready_;              // authenticated, by rank
  std::map<int, std::deque<Fd>> lanes_;  // authenticated lanes, by the rank that opened them
  SockAddr self_;
  Clock::time_point lastAccept_{};
};

class TcpConnection final : public Connection {
 public:
  // fd < 0: waits for the peer to connect (accepted through `transport`); else `hello` is this side's
  // hello on fd, finished by poll() before any frame moves.
  TcpConnection(const PeerInfo& peer, int fd, TcpTransport* transport, std::unique_ptr<Handshake> hello = nullptr)
      : Connection(peer), fd_(fd), transport_(transport), hello_(std::move(hello)) {}
  Status postSend(Request* r) override;
  Status postRecv(Request* r) override;
  Status poll() override;
  Status checkAlive() override;
  bool busy() const override { return !sends_.empty() || !recvs_.empty(); }
  std::string describe() const override { return "tcp: " + socketEnds(fd_.get()); }
  // Our side of the hello: the executor drives it on every turn, requests or not, so the accepter never
  // waits on a quiet opener for the proof.
  bool hasBackgroundWork() const override { return hello_ != nullptr; }

 private:
  struct Header {
    uint32_t magic;
    uint32_t tag;
    uint64_t bytes;
  };
  Status pollSends();
  Status pollRecvs();
  Status ioError(const char* what, int err) const;

  Fd fd_;
  TcpTransport* transport_;
  std::unique_ptr<Handshake> hello_;
  std::deque<Request*> sends_;
  std::deque<Request*> recvs_;
  Header sendHeader_{};
  size_t sendDone_ = 0;  // bytes of the front frame (header + payload) sent
  Header recvHeader_{};
  size_t recvDone_ = 0;  // bytes of the front frame received
};

}  // namespace myriad
