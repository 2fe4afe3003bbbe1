#include "transports/cuda_ipc/fd_socket.h"

#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <thread>

namespace myriad {
namespace {

Result<sockaddr_un> abstractAddress(const std::string& name, socklen_t* len) {
  sockaddr_un a{};
  a.sun_family = AF_UNIX;
  if (name.size() + 1 > sizeof(a.sun_path)) return internalError("socket name too long: " + name);
  a.sun_path[0] = '\0';  // abstract namespace
  std::memcpy(a.sun_path + 1, name.data(), name.size());
  *len = static_cast<socklen_t>(offsetof(sockaddr_un, sun_path) + 1 + name.size());
  return a;
}

int msLeft(Clock::time_point deadline) {
  auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
  return left < 0 ? 0 : static_cast<int>(std::min<long long>(left, 100));
}

Status waitFd(int fd, short events, Clock::time_point deadline, const std::atomic<bool>* abort,
              const std::string& what) {
  for (;;) {
    if (abort && abort->load()) return invalidUsage(what + ": aborted");
    pollfd p{fd, events, 0};
    int r = ::poll(&p, 1, msLeft(deadline));
    if (r > 0) return Status::ok();
    if (r < 0 && errno != EINTR) return systemError(what, errno);
    if (Clock::now() >= deadline) return Status(Code::kTimeout, what + ": timed out");
  }
}

Status checkPeer(int sock, const PeerCheck& peer) {
  ucred cred{};
  socklen_t len = sizeof(cred);
  if (::getsockopt(sock, SOL_SOCKET, SO_PEERCRED, &cred, &len) != 0) return systemError("SO_PEERCRED", errno);
  if (peer.pid ? cred.pid != peer.pid : cred.uid != ::getuid())
    return invalidUsage("device memory exchange with " + peer.name + ": the socket's peer is pid " +
                        std::to_string(cred.pid) + " uid " + std::to_string(cred.uid) + ", not that rank");
  return Status::ok();
}

}  // namespace

Result<int> pairSocket(const std::string& name, bool listen, const PeerCheck& peer, Clock::time_point deadline,
                       const std::atomic<bool>* abort) {
  socklen_t len = 0;
  MYR_ASSIGN_OR_RETURN(sockaddr_un addr, abstractAddress(name, &len));
  const std::string what = "device memory exchange with " + peer.name;
  if (listen) {
    int l = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (l < 0) return systemError("socket", errno);
    if (::bind(l, reinterpret_cast<sockaddr*>(&addr), len) != 0 || ::listen(l, 1) != 0) {
      int e = errno;
      ::close(l);
      return systemError(what + ": listening", e);
    }
    // Anyone on the host may connect: accept until the announced peer does.
    for (;;) {
      Status w = waitFd(l, POLLIN, deadline, abort, what + " (waiting for it to connect)");
      if (!w.isOk()) {
        ::close(l);
        return w;
      }
      int s = ::accept4(l, nullptr, nullptr, SOCK_CLOEXEC);
      if (s < 0) continue;
      if (checkPeer(s, peer).isOk()) {
        ::close(l);
        return s;
      }
      ::close(s);
    }
  }
  for (;;) {
    int s = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (s < 0) return systemError("socket", errno);
    if (::connect(s, reinterpret_cast<sockaddr*>(&addr), len) == 0) {
      Status c = checkPeer(s, peer);
      if (!c.isOk()) {
        ::close(s);
        return c;
      }
      return s;
    }
    int e = errno;
    ::close(s);
    if (e != ECONNREFUSED && e != ENOENT && e != EAGAIN) return systemError(what + ": connecting", e);
    if (abort && abort->load()) return invalidUsage(what + ": aborted");
    if (Clock::now() >= deadline)
      return Status(Code::kTimeout, what + ": it never listened (did it make the same call?)");
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
}

Status sendWithFd(int sock, const std::vector<uint8_t>& bytes, int fd, Clock::time_point deadline,
                  const std::string& peer) {
  size_t done = 0;
  while (done < bytes.size()) {
    iovec iov{const_cast<uint8_t*>(bytes.data()) + done, bytes.size() - done};
    msghdr m{};
    m.msg_iov = &iov;
    m.msg_iovlen = 1;
    alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int))];
    if (done == 0 && fd >= 0) {
      m.msg_control = control;
      m.msg_controllen = sizeof(control);
      cmsghdr* c = CMSG_FIRSTHDR(&m);
      c->cmsg_level = SOL_SOCKET;
      c->cmsg_type = SCM_RIGHTS;
      c->cmsg_len = CMSG_LEN(sizeof(int));
      std::memcpy(CMSG_DATA(c), &fd, sizeof(int));
    }
    ssize_t n = ::sendmsg(sock, &m, MSG_NOSIGNAL | MSG_DONTWAIT);
    if (n > 0) {
      done += static_cast<size_t>(n);
      continue;
    }
    if (n < 0 && errno != EAGAIN && errno != EINTR) return systemError("sending to " + peer, errno);
    MYR_TRY(waitFd(sock, POLLOUT, deadline, nullptr, "sending to " + peer));
  }
  return Status::ok();
}

Status recvWithFd(int sock, std::vector<uint8_t>* bytes, size_t n, int* fd, Clock::time_point deadline,
                  const std::string& peer) {
  bytes->assign(n, 0);
  *fd = -1;
  size_t done = 0;
  while (done < n) {
    iovec iov{bytes->data() + done, n - done};
    msghdr m{};
    m.msg_iov = &iov;
    m.msg_iovlen = 1;
    alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int))];
    m.msg_control = control;
    m.msg_controllen = sizeof(control);
    ssize_t r = ::recvmsg(sock, &m, MSG_DONTWAIT | MSG_CMSG_CLOEXEC);
    if (r > 0) {
      for (cmsghdr* c = CMSG_FIRSTHDR(&m); c; c = CMSG_NXTHDR(&m, c)) {
        if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS) continue;
        int got = -1;
        std::memcpy(&got, CMSG_DATA(c), sizeof(int));
        if (*fd >= 0 || done != 0) {
          ::close(got);  // only one descriptor, with the first bytes
          continue;
        }
        *fd = got;
      }
      done += static_cast<size_t>(r);
      continue;
    }
    if (r == 0) {
      if (*fd >= 0) ::close(*fd);
      *fd = -1;
      return Status(Code::kRemoteError, peer + " closed the device memory exchange");
    }
    if (errno != EAGAIN && errno != EINTR) return systemError("receiving from " + peer, errno);
    Status w = waitFd(sock, POLLIN, deadline, nullptr, "receiving from " + peer);
    if (!w.isOk()) {
      if (*fd >= 0) ::close(*fd);
      *fd = -1;
      return w;
    }
  }
  return Status::ok();
}

}  // namespace myriad
