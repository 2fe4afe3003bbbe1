// Socket helpers shared by the tcp store, the bootstrap and the tcp transport: addresses, interface choice,
// and blocking I/O with a deadline for set-up paths (the data path uses non-blocking sockets directly).
#pragma once

#include <netinet/in.h>
#include <sys/socket.h>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <string>

#include "base/clock.h"
#include "base/status.h"

namespace myriad {

struct SockAddr {
  sockaddr_storage ss{};
  socklen_t len = 0;

  int family() const { return ss.ss_family; }
  uint16_t port() const;
  void setPort(uint16_t port);
  // "10.0.0.1:4000" or "[fe80::1]:4000"
  std::string toString() const;
  static Result<SockAddr> parse(const std::string& hostPort);
};

// The two ends of a connected socket: "10.1.1.2:41000 -> 10.2.1.2:5000" ("?" for an end the kernel does not
// name, e.g. before the connection is made).
std::string socketEnds(int fd);

// The address to listen on: MYRIAD_SOCKET_IFNAME (interface name, or address prefix) or else the first
// up, non-loopback IPv4 interface, else loopback.
Result<SockAddr> chooseListenAddress(const std::string& ifname);

// A listening socket bound to addr (port 0: any); addr's port is updated.
Result<int> listenOn(SockAddr* addr, int backlog);
// Connects with retries on ECONNREFUSED until the deadline (the peer may not listen yet).
Result<int> connectTo(const SockAddr& addr, Clock::time_point deadline, const std::atomic<bool>* abort);

Status setNonBlocking(int fd, bool on);
Status sendAll(int fd, const void* buf, size_t n, Clock::time_point deadline, const std::string& peer);
Status recvAll(int fd, void* buf, size_t n, Clock::time_point deadline, const std::string& peer);

// Closes on scope exit.
class Fd {
 public:
  Fd() = default;
  explicit Fd(int fd) : fd_(fd) {}
  Fd(Fd&& o) noexcept : fd_(o.release()) {}
  Fd& operator=(Fd&& o) noexcept;
  ~Fd();
  int get() const { return fd_; }
  int release() {
    int f = fd_;
    fd_ = -1;
    return f;
  }
  void reset();

 private:
  int fd_ = -1;
};

}  // namespace myriad
