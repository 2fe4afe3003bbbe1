// Socket helpers: addresses, interface choice, deadline-bounded blocking I/O for set-up.
#include "base/socket.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netdb.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <unistd.h>

#include <cstring>
#include <thread>

namespace myriad {

uint16_t SockAddr::port() const {
  if (family() == AF_INET) return ntohs(reinterpret_cast<const sockaddr_in*>(&ss)->sin_port);
  if (family() == AF_INET6) return ntohs(reinterpret_cast<const sockaddr_in6*>(&ss)->sin6_port);
  return 0;
}

void SockAddr::setPort(uint16_t port) {
  if (family() == AF_INET) reinterpret_cast<sockaddr_in*>(&ss)->sin_port = htons(port);
  if (family() == AF_INET6) reinterpret_cast<sockaddr_in6*>(&ss)->sin6_port = htons(port);
}

std::string SockAddr::toString() const {
  char host[INET6_ADDRSTRLEN] = "?";
  if (family() == AF_INET) {
    inet_ntop(AF_INET, &reinterpret_cast<const sockaddr_in*>(&ss)->sin_addr, host, sizeof(host));
    return std::string(host) + ":" + std::to_string(port());
  }
  if (family() == AF_INET6) {
    inet_ntop(AF_INET6, &reinterpret_cast<const sockaddr_in6*>(&ss)->sin6_addr, host, sizeof(host));
    return "[" + std::string(host) + "]:" + std::to_string(port());
  }
  return "<no address>";
}

Result<SockAddr> SockAddr::parse(const std::string& hostPort) {
  size_t colon = hostPort.rfind(':');
  if (colon == std::string::npos || colon == 0) return invalidArgument("'" + hostPort + "' is not host:port");
  std::string host = hostPort.substr(0, colon);
  std::string port = hostPort.substr(colon + 1);
  if (host.front() == '[' && host.back() == ']') host = host.substr(1, host.size() - 2);
  addrinfo hints{};
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* res = nullptr;
  int rc = getaddrinfo(host.c_str(), port.c_str(), &hints, &res);
  if (rc != 0 || !res) return invalidArgument("cannot resolve '" + hostPort + "': " + gai_strerror(rc));
  SockAddr a;
  std::memcpy(&a.ss, res->ai_addr, res->ai_addrlen);
  a.len = res->ai_addrlen;
  freeaddrinfo(res);
  return a;
}

Result<SockAddr> chooseListenAddress(const std::string& ifname) {
  ifaddrs* list = nullptr;
  if (getifaddrs(&list) != 0) return systemError("getifaddrs", errno);
  SockAddr best, loopback;
  for (ifaddrs* it = list; it; it = it->ifa_next) {
    if (!it->ifa_addr || !(it->ifa_flags & IFF_UP)) continue;
    int fam = it->ifa_addr->sa_family;
    if (fam != AF_INET && fam != AF_INET6) continue;
    SockAddr a;
    a.len = fam == AF_INET ? sizeof(sockaddr_in) : sizeof(sockaddr_in6);
    std::memcpy(&a.ss, it->ifa_addr, a.len);
    if (fam == AF_INET6 && IN6_IS_ADDR_LINKLOCAL(&reinterpret_cast<sockaddr_in6*>(&a.ss)->sin6_addr)) continue;
    if (!ifname.empty()) {
      std::string text = a.toString();
      if (ifname == it->ifa_name || text.rfind(ifname, 0) == 0) {
        best = a;
        break;
      }
      continue;
    }
    if (it->ifa_flags & IFF_LOOPBACK) {
      if (loopback.len == 0 && fam == AF_INET) loopback = a;
      continue;
    }
    if (best.len == 0 && fam == AF_INET) best = a;
  }
  freeifaddrs(list);
  if (best.len == 0 && !ifname.empty())
    return invalidArgument("MYRIAD_SOCKET_IFNAME='" + ifname + "' matches no interface that is up");
  if (best.len == 0) best = loopback;
  if (best.len == 0) return Status(Code::kSystemError, "no usable network interface (not even loopback)");
  best.setPort(0);
  return best;
}

Result<int> listenOn(SockAddr* addr, int backlog) {
  Fd fd(socket(addr->family(), SOCK_STREAM | SOCK_CLOEXEC, 0));
  if (fd.get() < 0) return systemError("socket", errno);
  int one = 1;
  setsockopt(fd.get(), SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
  if (bind(fd.get(), reinterpret_cast<sockaddr*>(&addr->ss), addr->len) != 0)
    return systemError("bind " + addr->toString(), errno);
  if (listen(fd.get(), backlog) != 0) return systemError("listen " + addr->toString(), errno);
  socklen_t len = sizeof(addr->ss);
  getsockname(fd.get(), reinterpret_cast<sockaddr*>(&addr->ss), &len);
  addr->len = len;
  return fd.release();
}

Result<int> connectTo(const SockAddr& addr, Clock::time_point deadline, const std::atomic<bool>* abort) {
  auto pause = std::chrono::milliseconds(1);
  while (true) {
    Fd fd(socket(addr.family(), SOCK_STREAM | SOCK_CLOEXEC, 0));
    if (fd.get() < 0) return systemError("socket", errno);
    int one = 1;
    setsockopt(fd.get(), IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    if (connect(fd.get(), reinterpret_cast<const sockaddr*>(&addr.ss), addr.len) == 0) return fd.release();
    int err = errno;
    bool retry = err == ECONNREFUSED || err == ETIMEDOUT || err == EINTR || err == EAGAIN;
    if (!retry || Clock::now() >= deadline || (abort && abort->load()))
      return systemError("connect to " + addr.toString(), err);
    std::this_thread::sleep_for(pause);
    pause = std::min(pause * 2, std::chrono::milliseconds(100));
  }
}

Status setNonBlocking(int fd, bool on) {
  int flags = fcntl(fd, F_GETFL);
  if (flags < 0) return systemError("fcntl", errno);
  flags = on ? (flags | O_NONBLOCK) : (flags & ~O_NONBLOCK);
  if (fcntl(fd, F_SETFL, flags) != 0) return systemError("fcntl", errno);
  return Status::ok();
}

namespace {
Status waitFd(int fd, short events, Clock::time_point deadline, const std::string& what) {
  while (true) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
    if (left <= 0) return Status(Code::kTimeout, what + ": no progress before the deadline");
    pollfd p{fd, events, 0};
    int rc = poll(&p, 1, static_cast<int>(std::min<int64_t>(left, 100)));
    if (rc > 0) return Status::ok();
    if (rc < 0 && errno != EINTR) return systemError(what + ": poll", errno);
  }
}
}  // namespace

Status sendAll(int fd, const void* buf, size_t n, Clock::time_point deadline, const std::string& peer) {
  const char* p = static_cast<const char*>(buf);
  while (n > 0) {
    ssize_t k = send(fd, p, n, MSG_NOSIGNAL | MSG_DONTWAIT);
    if (k > 0) {
      p += k;
      n -= static_cast<size_t>(k);
      continue;
    }
    if (k < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)) {
      MYR_TRY(waitFd(fd, POLLOUT, deadline, "send to " + peer));
      continue;
    }
    return systemError("send to " + peer, errno);
  }
  return Status::ok();
}

Status recvAll(int fd, void* buf, size_t n, Clock::time_point deadline, const std::string& peer) {
  char* p = static_cast<char*>(buf);
  while (n > 0) {
    ssize_t k = recv(fd, p, n, MSG_DONTWAIT);
    if (k > 0) {
      p += k;
      n -= static_cast<size_t>(k);
      continue;
    }
    if (k == 0) return Status(Code::kRemoteError, "recv from " + peer + ": connection closed");
    if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR) {
      MYR_TRY(waitFd(fd, POLLIN, deadline, "recv from " + peer));
      continue;
    }
    return systemError("recv from " + peer, errno);
  }
  return Status::ok();
}

Fd& Fd::operator=(Fd&& o) noexcept {
  if (this != &o) {
    reset();
    fd_ = o.release();
  }
  return *this;
}
Fd::~Fd() {
  reset();
}
void Fd::reset() {
  if (fd_ >= 0) close(fd_);
  fd_ = -1;
}

std::string socketEnds(int fd) {
  SockAddr local;
  SockAddr remote;
  local.len = remote.len = sizeof(sockaddr_storage);
  const bool haveLocal = fd >= 0 && getsockname(fd, reinterpret_cast<sockaddr*>(&local.ss), &local.len) == 0;
  const bool haveRemote = fd >= 0 && getpeername(fd, reinterpret_cast<sockaddr*>(&remote.ss), &remote.len) == 0;
  return (haveLocal ? local.toString() : std::string("?")) + " -> " +
         (haveRemote ? remote.toString() : std::string("?"));
}

}  // namespace myriad
