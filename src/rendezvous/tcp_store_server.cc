// TcpStore server: one thread, poll() over the listener and its clients, never blocking on any one of them.
// Hostile input (wrong secret, bad op, oversized key or value, silence before the hello) drops that client
// and logs it; it never stops the server or other clients.
#include <poll.h>
#include <unistd.h>

#include <cstring>
#include <list>
#include <map>
#include <thread>

#include "base/log.h"
#include "base/wire.h"
#include "rendezvous/peer_info.h"
#include "rendezvous/tcp_store.h"

namespace myriad {
namespace {

constexpr int kHelloTimeoutMs = 10000;

struct Client {
  Fd fd;
  std::string peer;
  Clock::time_point since = Clock::now();
  std::unique_ptr<Handshake> hello;  // until the client has proved the secret
  Bytes in;
  Bytes out;
  size_t outOff = 0;
  bool dead = false;
};

class Server {
 public:
  Server(int listenFd, Secret secret, std::string where)
      : listen_(listenFd), key_(storeproto::helloKey(secret)), where_(std::move(where)) {}

  void run() {
    while (true) {
      std::vector<pollfd> fds{{listen_.get(), POLLIN, 0}};
      for (auto& c : clients_)
        fds.push_back({c.fd.get(), static_cast<short>(POLLIN | (c.out.size() > c.outOff ? POLLOUT : 0)), 0});
      if (poll(fds.data(), fds.size(), 1000) < 0 && errno != EINTR) return;
      if (fds[0].revents & POLLIN) acceptAll();
      size_t i = 1;
      for (auto& c : clients_) {
        if (i >= fds.size()) break;
        short ev = fds[i++].revents;
        if (ev & (POLLIN | POLLHUP | POLLERR)) readFrom(c);
        if (!c.dead && (ev & POLLOUT)) flush(c);
        if (!c.dead && c.hello && msSince(c.since) > kHelloTimeoutMs) drop(c, "no hello within 10 s");
      }
      for (auto& entry : waiters_) std::erase_if(entry.second, [](const Client* w) { return w->dead; });
      clients_.remove_if([](const Client& c) { return c.dead; });
    }
  }

  void preset(const std::string& key, const std::string& value) { kv_[key] = Bytes(value.begin(), value.end()); }

 private:
  void acceptAll() {
    while (true) {
      SockAddr from;
      from.len = sizeof(from.ss);
      int fd = accept4(listen_.get(), reinterpret_cast<sockaddr*>(&from.ss), &from.len, SOCK_NONBLOCK | SOCK_CLOEXEC);
      if (fd < 0) return;
      clients_.push_back(Client{});
      clients_.back().fd = Fd(fd);
      clients_.back().peer = from.toString();
      clients_.back().hello = std::make_unique<Handshake>(Handshake::Role::kAccepter, key_, HelloIdent{},
                                                          std::vector<uint32_t>{storeproto::kLegacyHelloMagic});
    }
  }

  void drop(Client& c, const std::string& why) {
    MYR_LOG(kWarn, kBoot, -1, "rendezvous " + where_ + ": dropped connection from " + c.peer + ": " + why);
    c.dead = true;
    c.fd.reset();
  }

  // The hello reads only its own bytes; requests that follow it stay in the socket for the loop below.
  bool stepHello(Client& c) {
    Status s = c.hello->step(c.fd.get());
    if (s.isOk() && c.hello->done() && c.hello->ident() != storeproto::helloIdent())
      s = Status(Code::kRemoteError, "not a store hello");
    if (!s.isOk()) return drop(c, s.message()), false;
    if (!c.hello->done()) return false;
    c.hello.reset();
    return true;
  }

  void readFrom(Client& c) {
    if (c.hello && !stepHello(c)) return;
    uint8_t buf[65536];
    while (!c.dead) {
      ssize_t n = recv(c.fd.get(), buf, sizeof(buf), MSG_DONTWAIT);
      if (n > 0) {
        c.in.insert(c.in.end(), buf, buf + n);
        continue;
      }
      if (n == 0 || (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)) {
        c.dead = true;  // an ordinary disconnect: ranks close their store when done
        c.fd.reset();
      }
      break;
    }
    size_t used = 0;
    while (!c.dead && parseOne(c, &used)) {
    }
    c.in.erase(c.in.begin(), c.in.begin() + static_cast<ptrdiff_t>(used));
  }

  // Handles one complete message at c.in[*used...]; false when more bytes are needed (or c was dropped).
  bool parseOne(Client& c, size_t* used) {
    const uint8_t* p = c.in.data() + *used;
    size_t n = c.in.size() - *used;
    if (n < 5) return false;
    uint8_t op = p[0];
    uint32_t keyLen;
    std::memcpy(&keyLen, p + 1, 4);
    if (op < storeproto::kSet || op > storeproto::kTryGet)
      return drop(c, "unknown request " + std::to_string(op)), false;
    if (keyLen == 0 || keyLen > kMaxStoreKey) return drop(c, "bad key length"), false;
    if (n < 5 + keyLen) return false;
    std::string key(reinterpret_cast<const char*>(p + 5), keyLen);
    if (!checkStoreKey(key).isOk()) return drop(c, "bad key"), false;
    size_t need = 5 + keyLen;
    if (op == storeproto::kSet) {
      if (n < need + 8) return false;
      uint64_t len;
      std::memcpy(&len, p + need, 8);
      if (len > kMaxStoreValue) return drop(c, "oversized value"), false;
      if (n < need + 8 + len) return false;
      kv_[key] = Bytes(p + need + 8, p + need + 8 + len);
      need += 8 + len;
      reply(c, true, nullptr);
      wakeWaiters(key);
    } else {
      auto it = kv_.find(key);
      if (it != kv_.end())
        reply(c, true, &it->second);
      else if (op == storeproto::kTryGet)
        reply(c, false, nullptr);
      else
        waiters_[key].push_back(&c);
    }
    *used += need;
    return true;
  }

  void reply(Client& c, bool found, const Bytes* value) {
    c.out.push_back(found ? 1 : 0);
    if (found) {
      uint64_t len = value ? value->size() : 0;
      auto b = reinterpret_cast<const uint8_t*>(&len);
      c.out.insert(c.out.end(), b, b + 8);
      if (value) c.out.insert(c.out.end(), value->begin(), value->end());
    }
    flush(c);
  }

  void wakeWaiters(const std::string& key) {
    auto it = waiters_.find(key);
    if (it == waiters_.end()) return;
    for (Client* w : it->second)
      if (!w->dead) reply(*w, true, &kv_[key]);
    waiters_.erase(it);
  }

  void flush(Client& c) {
    while (c.outOff < c.out.size()) {
      ssize_t n = send(c.fd.get(), c.out.data() + c.outOff, c.out.size() - c.outOff, MSG_NOSIGNAL | MSG_DONTWAIT);
      if (n > 0) {
        c.outOff += static_cast<size_t>(n);
        continue;
      }
      if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)) return;
      c.dead = true;
      c.fd.reset();
      return;
    }
    c.out.clear();
    c.outOff = 0;
  }

  Fd listen_;
  auth::Key key_;
  std::string where_;
  std::list<Client> clients_;  // a list: waiters hold pointers to clients
  std::map<std::string, Bytes> kv_;
  std::map<std::string, std::vector<Client*>> waiters_;
};

}  // namespace

Status startTcpStoreServer(SockAddr* addr, const Secret& secret) {
  MYR_ASSIGN_OR_RETURN(int fd, listenOn(addr, 4096));
  MYR_TRY(setNonBlocking(fd, true));
  // The server outlives every communicator of this process: it is intentionally never destroyed, so it
  // can carry abort notices until the process exits.
  auto* server = new Server(fd, secret, addr->toString());
  server->preset(kStoreOwnerKey, localHostname() + " " + std::to_string(getpid()));
  std::thread([server] { server->run(); }).detach();
  MYR_LOG(kInfo, kBoot, -1, "rendezvous root listening on " + addr->toString());
  return Status::ok();
}

}  // namespace myriad
