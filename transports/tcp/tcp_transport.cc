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
// Version 1 hellos (the secret in clear), refused by name.
constexpr uint32_t kLegacyHelloMagic = 0x5459594d;      // "MYYT": the one connection of a pair
constexpr uint32_t kLegacyLaneHelloMagic = 0x4c59594d;  // "MYYL": one lane of a path set
constexpr uint8_t kConnKind = 'T', kLaneKind = 'L';     // the ident's first byte
constexpr int kHelloTimeoutMs = 10000;

HelloIdent identOf(uint8_t kind, int32_t src, int32_t dst) {
  HelloIdent id{kind};
  std::memcpy(id.data() + 4, &src, 4);
  std::memcpy(id.data() + 8, &dst, 4);
  return id;
}
constexpr auto kAcceptEvery = std::chrono::microseconds(500);
}  // namespace

Result<std::unique_ptr<TcpTransport>> TcpTransport::create(TransportContext ctx, PeerInfo* self) {
  std::unique_ptr<TcpTransport> t(new TcpTransport(std::move(ctx)));
  MYR_ASSIGN_OR_RETURN(SockAddr addr, chooseListenAddress(t->ctx_.config->socketIfname));
  addr.setPort(static_cast<uint16_t>(t->ctx_.config->netListenPort));
  MYR_ASSIGN_OR_RETURN(int fd, listenOn(&addr, 1024));
  t->listen_ = Fd(fd);
  t->helloKey_ =
      auth::deriveKey(t->ctx_.secret.data(), t->ctx_.secret.size(), "myriad tcp hello v2 " + t->ctx_.commTag);
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

std::unique_ptr<Handshake> TcpTransport::openHello(int peer, bool lane) const {
  return std::make_unique<Handshake>(Handshake::Role::kOpener, helloKey_,
                                     identOf(lane ? kLaneKind : kConnKind, ctx_.rank, peer));
}

Result<std::unique_ptr<Connection>> TcpTransport::connect(const PeerInfo& peer) {
  const Config& c = *ctx_.config;
  if (c.netPaths > 1) {
    mp::MultipathOptions o;
    o.paths = c.netPaths;
    o.adaptive = c.netAdaptive;
    o.standDown = c.netPathsAuto;
    o.splitBytes = c.netSplitBytes;
    o.chunkBytes = c.netChunkBytes;
    o.inflightBytes = c.netInflightBytes;
    o.coupled = c.netCoupled;
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
  MYR_TRY(tuneSocket(fd.get()));
  // The Open goes now; the peer answers when it next polls, and our poll() sends the proof.
  auto hello = openHello(peer.rank, false);
  MYR_TRY(hello->step(fd.get()).addContext("tcp: hello to " + peer.describe()));
  MYR_LOG(kInfo, kNet, ctx_.rank, "tcp: connected to " + peer.describe() + " at " + peer.tcpAddr.toString());
  return std::unique_ptr<Connection>(new TcpConnection(peer, fd.release(), this, std::move(hello)));
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
    p.hello = std::make_unique<Handshake>(Handshake::Role::kAccepter, helloKey_, HelloIdent{},
                                          std::vector<uint32_t>{kLegacyHelloMagic, kLegacyLaneHelloMagic});
    pending_.push_back(std::move(p));
  }
}

void TcpTransport::readHellos() {
  for (auto& p : pending_) {
    Status s = p.hello->step(p.fd.get());
    std::string why = s.isOk() ? "" : s.message();
    if (why.empty() && p.hello->done()) {
      const HelloIdent& id = p.hello->ident();
      int32_t src, dst;
      std::memcpy(&src, id.data() + 4, 4);
      std::memcpy(&dst, id.data() + 8, 4);
      bool lane = id == identOf(kLaneKind, src, dst);
      if (!lane && id != identOf(kConnKind, src, dst))
        why = "hello names no tcp connection kind";
      else if (lane && (dst != ctx_.rank || src < 0 || src >= ctx_.nranks || src == ctx_.rank))
        why = "lane hello names ranks " + std::to_string(src) + "->" + std::to_string(dst);
      else if (!lane && (dst != ctx_.rank || src < 0 || src >= ctx_.rank))
        why = "hello names ranks " + std::to_string(src) + "->" + std::to_string(dst);
      else if (!lane && ready_.count(src))
        why = "a second connection from rank " + std::to_string(src);
      if (why.empty()) {
        Status t = tuneSocket(p.fd.get());
        if (t.isOk() && lane)
          lanes_[src].push_back(std::move(p.fd));
        else if (t.isOk())
          ready_[src] = std::move(p.fd);
        else
          why = t.message();
      }
    } else if (why.empty() && msSince(p.since) > kHelloTimeoutMs) {
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
