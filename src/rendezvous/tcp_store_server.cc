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
#include "rendezvous/store_request.h"
#include "rendezvous/tcp_store.h"

namespace myriad {
namespace {

// A client silent this long in the middle of its hello is dropped (the clock restarts at each step it takes).
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
        if (!c.dead && c.hello && msSince(c.since) > kHelloTimeoutMs) drop(c, "silent for 10 s in its hello");
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

  // Every drop is logged until kDropsInFull; after that (a scanner, a flood) one line per kDropLogEvery says
  // how many more there were, so that a flood cannot fill the log.
  void drop(Client& c, const std::string& why) {
    ++drops_;
    if (drops_ <= kDropsInFull) {
      MYR_LOG(kWarn, kBoot, -1, "rendezvous " + where_ + ": dropped connection from " + c.peer + ": " + why);
    } else if (Clock::now() - lastDropLog_ >= kDropLogEvery) {
      MYR_LOG(kWarn, kBoot, -1,
              "rendezvous " + where_ + ": dropped " + std::to_string(drops_ - dropsLogged_) +
                  " more connections (the last from " + c.peer + ": " + why + "); " + std::to_string(drops_) +
                  " in all");
      dropsLogged_ = drops_;
      lastDropLog_ = Clock::now();
    }
    c.dead = true;
    c.fd.reset();
  }

  // The hello reads only its own bytes; requests that follow it stay in the socket for the loop below.
  bool stepHello(Client& c) {
    const size_t sent = c.hello->sent().size();
    Status s = c.hello->step(c.fd.get());
    if (c.hello->sent().size() != sent) c.since = Clock::now();  // the client's Open came: its Proof is due
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
    storeproto::Request req = storeproto::parseRequest(c.in.data() + *used, c.in.size() - *used);
    if (req.parse == storeproto::Request::Parse::kBad) return drop(c, req.why), false;
    if (req.parse == storeproto::Request::Parse::kNeedMore) return false;
    if (req.op == storeproto::kSet) {
      kv_[req.key] = Bytes(req.value, req.value + req.valueBytes);
      reply(c, true, nullptr);
      wakeWaiters(req.key);
    } else {
      auto it = kv_.find(req.key);
      if (it != kv_.end())
        reply(c, true, &it->second);
      else if (req.op == storeproto::kTryGet)
        reply(c, false, nullptr);
      else
        waiters_[req.key].push_back(&c);
    }
    *used += req.used;
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

  static constexpr uint64_t kDropsInFull = 20;
  static constexpr auto kDropLogEvery = std::chrono::seconds(10);

  Fd listen_;
  auth::Key key_;
  uint64_t drops_ = 0;
  uint64_t dropsLogged_ = kDropsInFull;
  Clock::time_point lastDropLog_{};
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
