// tcp transport: listener, authenticated connection set-up, and the accept side's hello parser.
#include "transports/tcp/tcp_transport.h"

#include <netinet/tcp.h>
#include <unistd.h>

#include <cstring>
#include <random>

#include "base/log.h"
#include "rendezvous/unique_id.h"
#include "transports/multipath/multipath_connection.h"
#include "transports/tcp/tcp_lane.h"

namespace myriad {
namespace {
constexpr uint32_t kHelloMagic = 0x5459594d;      // "MYYT": the one connection of a pair
constexpr uint32_t kLaneHelloMagic = 0x4c59594d;  // "MYYL": one lane of a path set
constexpr size_t kHelloBytes = 4 + 16 + 4 + 4;
constexpr int kHelloTimeoutMs = 10000;
constexpr auto kAcceptEvery = std::chrono::microseconds(500);
}  // namespace

Result<std::unique_ptr<TcpTransport>> TcpTransport::create(TransportContext ctx, PeerInfo* self) {
  std::unique_ptr<TcpTransport> t(new TcpTransport(std::move(ctx)));
  MYR_ASSIGN_OR_RETURN(SockAddr addr, chooseListenAddress(t->ctx_.config->socketIfname));
  addr.setPort(static_cast<uint16_t>(t->ctx_.config->netListenPort));
  MYR_ASSIGN_OR_RETURN(int fd, listenOn(&addr, 1024));
  t->listen_ = Fd(fd);
  MYR_TRY(setNonBlocking(fd, true));
  self->tcpAddr = addr;
  t->self_ = addr;
  MYR_LOG(kInfo, kNet, t->ctx_.rank, "tcp: listening on " + addr.toString());
  return t;
}

Status TcpTransport::tuneSocket(int fd) const {
  int one = 1;
  setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
  if (ctx_.config->socketBufferBytes > 0) {
    int b = static_cast<int>(std::min<size_t>(ctx_.config->socketBufferBytes, 1 << 30));
    setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &b, sizeof(b));
    setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &b, sizeof(b));
  }
  return setNonBlocking(fd, true);
}

std::vector<uint8_t> TcpTransport::laneHello(int peer) const {
  std::vector<uint8_t> hello(kHelloBytes);
  uint32_t magic = kLaneHelloMagic;
  int32_t src = ctx_.rank, dst = peer;
  std::memcpy(hello.data(), &magic, 4);
  std::memcpy(hello.data() + 4, ctx_.secret.data(), 16);
  std::memcpy(hello.data() + 20, &src, 4);
  std::memcpy(hello.data() + 24, &dst, 4);
  return hello;
}

Result<std::unique_ptr<Connection>> TcpTransport::connect(const PeerInfo& peer) {
  const Config& c = *ctx_.config;
  if (c.netPaths > 1) {
    mp::MultipathOptions o;
    o.paths = c.netPaths;
    o.adaptive = c.netAdaptive;
    o.splitBytes = c.netSplitBytes;
    o.chunkBytes = c.netChunkBytes;
    o.inflightBytes = c.netInflightBytes;
    MYR_ASSIGN_OR_RETURN(o.ports, mp::parsePortRange(c.netPorts));
    o.seed = c.netSeed
                 ? c.netSeed * 1000003 + static_cast<uint64_t>(ctx_.rank) * 7919 + static_cast<uint64_t>(peer.rank)
                 : std::random_device{}() ^ (static_cast<uint64_t>(std::random_device{}()) << 32);
    o.rank = ctx_.rank;
    o.commTag = ctx_.commTag;
    o.initTimeoutMs = c.initTimeoutMs;
    return std::unique_ptr<Connection>(
        new mp::MultipathConnection(peer, std::move(o), std::make_unique<TcpLaneFactory>(this, peer)));
  }
  if (peer.rank < ctx_.rank) return std::unique_ptr<Connection>(new TcpConnection(peer, -1, this));
  MYR_ASSIGN_OR_RETURN(int raw, connectTo(peer.tcpAddr, deadlineIn(ctx_.config->initTimeoutMs), ctx_.abort));
  Fd fd(raw);
  uint8_t hello[kHelloBytes];
  uint32_t magic = kHelloMagic;
  int32_t src = ctx_.rank, dst = peer.rank;
  std::memcpy(hello, &magic, 4);
  std::memcpy(hello + 4, ctx_.secret.data(), 16);
  std::memcpy(hello + 20, &src, 4);
  std::memcpy(hello + 24, &dst, 4);
  MYR_TRY(tuneSocket(fd.get()));
  MYR_TRY(sendAll(fd.get(), hello, sizeof(hello), deadlineIn(ctx_.config->timeoutMs), peer.describe())
              .addContext("tcp: hello"));
  MYR_LOG(kInfo, kNet, ctx_.rank, "tcp: connected to " + peer.describe() + " at " + peer.tcpAddr.toString());
  return std::unique_ptr<Connection>(new TcpConnection(peer, fd.release(), this));
}

void TcpTransport::acceptNew() {
  auto now = Clock::now();
  if (now - lastAccept_ < kAcceptEvery) return;
  lastAccept_ = now;
  while (true) {
    SockAddr from;
    from.len = sizeof(from.ss);
    int fd = accept4(listen_.get(), reinterpret_cast<sockaddr*>(&from.ss), &from.len, SOCK_NONBLOCK | SOCK_CLOEXEC);
    if (fd < 0) return;
    Pending p;
    p.fd = Fd(fd);
    p.from = from.toString();
    p.since = Clock::now();
    pending_.push_back(std::move(p));
  }
}

void TcpTransport::readHellos() {
  for (auto& p : pending_) {
    while (p.fd.get() >= 0 && p.got < kHelloBytes) {
      ssize_t n = recv(p.fd.get(), p.hello + p.got, kHelloBytes - p.got, MSG_DONTWAIT);
      if (n > 0) {
        p.got += static_cast<size_t>(n);
        continue;
      }
      if (n == 0 || (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)) p.fd.reset();
      break;
    }
    std::string why;
    if (p.fd.get() >= 0 && p.got == kHelloBytes) {
      uint32_t magic;
      int32_t src, dst;
      std::array<uint8_t, 16> secret;
      std::memcpy(&magic, p.hello, 4);
      std::memcpy(secret.data(), p.hello + 4, 16);
      std::memcpy(&src, p.hello + 20, 4);
      std::memcpy(&dst, p.hello + 24, 4);
      bool lane = magic == kLaneHelloMagic;
      if (magic != kHelloMagic && !lane)
        why = "not a Myriad hello";
      else if (!secretEquals(secret, ctx_.secret))
        why = "wrong secret (not a member of this communicator)";
      else if (lane && (dst != ctx_.rank || src < 0 || src >= ctx_.nranks || src == ctx_.rank))
        why = "lane hello names ranks " + std::to_string(src) + "->" + std::to_string(dst);
      else if (!lane && (dst != ctx_.rank || src < 0 || src >= ctx_.rank))
        why = "hello names ranks " + std::to_string(src) + "->" + std::to_string(dst);
      else if (!lane && ready_.count(src))
        why = "a second connection from rank " + std::to_string(src);
      if (why.empty()) {
        Status s = tuneSocket(p.fd.get());
        if (s.isOk() && lane)
          lanes_[src].push_back(std::move(p.fd));
        else if (s.isOk())
          ready_[src] = std::move(p.fd);
        else
          why = s.message();
      }
    } else if (p.fd.get() >= 0 && msSince(p.since) > kHelloTimeoutMs) {
      why = "no hello within 10 s";
    }
    if (!why.empty()) {
      MYR_LOG(kWarn, kNet, ctx_.rank, "tcp: dropped connection from " + p.from + ": " + why);
      p.fd.reset();
    }
  }
  std::erase_if(pending_, [](const Pending& p) { return p.fd.get() < 0; });
}

Result<int> TcpTransport::takeAccepted(int rank) {
  acceptNew();
  readHellos();
  auto it = ready_.find(rank);
  if (it == ready_.end()) return -1;
  int fd = it->second.release();
  ready_.erase(it);
  return fd;
}

Result<int> TcpTransport::takeLane(int rank) {
  acceptNew();
  readHellos();
  auto it = lanes_.find(rank);
  if (it == lanes_.end() || it->second.empty()) return -1;
  int fd = it->second.front().release();
  it->second.pop_front();
  return fd;
}

std::string TcpTransport::telemetry() const {
  return mp::formatTelemetry(mp::telemetrySnapshot(ctx_.commTag, "tcp"));
}

}  // namespace myriad
