// TcpStore server: one thread, epoll over the listener and its clients, never blocking on any one of them.
// Its work per request does not grow with the clients connected: every rank of a job keeps its client open
// through init, and a server that looked at every client per wake-up (poll over all of them) spent 243-259 µs
// per get with 1,000 quiet clients connected instead of 23-26 (myriad_bootstrap_bench --store-cost), which at
// 131,072 ranks would be the whole init. Hostile input (wrong secret, bad op, oversized key or value, silence before
// the hello) drops that client and logs it; it never stops the server or other clients.
#include <sys/epoll.h>
#include <unistd.h>

#include <algorithm>
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

// A client holds at most this many waits unanswered (the library's client holds one at a time: a wait it gave
// up on is resumed, other requests go on a second connection); one that asks for more is dropped, so that a
// member that misbehaves cannot make the server hold waiters without bound.
constexpr size_t kMaxHeldWaits = 16;

// Hellos are checked for silence this often (a sweep over the clients still in their hello).
constexpr auto kHelloSweepEvery = std::chrono::seconds(1);

struct Client;

// A get-wait or wait-all the server holds until its keys are set (or, a wait-all, its stop key is).
struct Waiter {
  Client* client = nullptr;
  bool all = false;               // a wait-all (its reply: the stop key's, then one per key)
  std::string stop;               // a wait-all's stop key, or empty
  std::vector<std::string> keys;  // in the order the client asked
  size_t missing = 0;             // distinct keys not yet set
  std::vector<std::string> on;    // the keys under which it is registered (distinct)
};

struct Client {
  Fd fd;
  std::string peer;
  Clock::time_point since = Clock::now();
  std::unique_ptr<Handshake> hello;  // until the client has proved the secret
  Bytes in;
  Bytes out;
  size_t outOff = 0;
  bool dead = false;
  bool wantOut = false;                  // registered for EPOLLOUT (replies wait in `out`)
  std::list<Waiter> waits;               // its get-waits and wait-alls not yet answered
  std::list<Client>::iterator self;      // its place in the server's list
  std::list<Client*>::iterator helloAt;  // its place among the clients in their hello, while it is
};

class Server {
 public:
  Server(int listenFd, Secret secret, std::string where)
      : listen_(listenFd), key_(storeproto::helloKey(secret)), where_(std::move(where)) {}

  // The epoll set with the listener in it (before run()).
  Status open() {
    epoll_ = Fd(epoll_create1(EPOLL_CLOEXEC));
    if (epoll_.get() < 0) return Status(Code::kSystemError, std::string("epoll_create1: ") + std::strerror(errno));
    epoll_event ev{};
    ev.events = EPOLLIN;
    ev.data.ptr = nullptr;  // the listener
    if (epoll_ctl(epoll_.get(), EPOLL_CTL_ADD, listen_.get(), &ev) != 0)
      return Status(Code::kSystemError, std::string("epoll_ctl: ") + std::strerror(errno));
    return Status::ok();
  }

  void run() {
    std::vector<epoll_event> ready(256);
    Clock::time_point lastSweep = Clock::now();
    while (true) {
      const int n = epoll_wait(epoll_.get(), ready.data(), static_cast<int>(ready.size()), 1000);
      if (n < 0 && errno != EINTR) return;
      for (int i = 0; i < n; ++i) {
        auto* c = static_cast<Client*>(ready[static_cast<size_t>(i)].data.ptr);
        const uint32_t got = ready[static_cast<size_t>(i)].events;
        if (!c) {
          acceptAll();
          continue;
        }
        if (c->dead) continue;  // dropped earlier in this batch
        if (got & (EPOLLIN | EPOLLHUP | EPOLLERR)) readFrom(*c);
        if (!c->dead && (got & EPOLLOUT)) flush(*c);
      }
      if (Clock::now() - lastSweep >= kHelloSweepEvery) {
        lastSweep = Clock::now();
        for (Client* c : helloing_)
          if (!c->dead && msSince(c->since) > kHelloTimeoutMs) drop(*c, "silent for 10 s in its hello");
      }
      bury();
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
      Client& c = clients_.back();
      c.self = std::prev(clients_.end());
      c.fd = Fd(fd);
      c.peer = from.toString();
      c.hello = std::make_unique<Handshake>(Handshake::Role::kAccepter, key_, HelloIdent{},
                                            std::vector<uint32_t>{storeproto::kLegacyHelloMagic});
      c.helloAt = helloing_.insert(helloing_.end(), &c);
      epoll_event ev{};
      ev.events = EPOLLIN;
      ev.data.ptr = &c;
      if (epoll_ctl(epoll_.get(), EPOLL_CTL_ADD, fd, &ev) != 0) kill(c);
    }
  }

  // Takes c out of epoll (by name: a forked child may hold a copy of its socket, which would keep it in the
  // set past the close), closes it and marks it for bury(), after the batch of events that may name it.
  void kill(Client& c) {
    if (c.dead) return;
    c.dead = true;
    if (c.fd.get() >= 0) epoll_ctl(epoll_.get(), EPOLL_CTL_DEL, c.fd.get(), nullptr);
    c.fd.reset();
    dead_.push_back(&c);
  }

  // Forgets the clients killed since the last call: their get-waits and their place in the list.
  void bury() {
    for (Client* c : dead_) {
      for (Waiter& w : c->waits) unregister(w, "");
      if (c->hello) helloing_.erase(c->helloAt);
      clients_.erase(c->self);
    }
    dead_.clear();
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
    kill(c);
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
    helloing_.erase(c.helloAt);
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
      if (n == 0 || (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR))
        kill(c);  // an ordinary disconnect: ranks close their store when done
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
    } else if (req.op == storeproto::kWaitAll) {
      wait(c, true, std::move(req.key), std::move(req.keys));
    } else {
      auto it = kv_.find(req.key);
      if (it != kv_.end())
        reply(c, true, &it->second);
      else if (req.op == storeproto::kTryGet)
        reply(c, false, nullptr);
      else
        wait(c, false, "", {std::move(req.key)});
    }
    *used += req.used;
    return true;
  }

  // Answers a get-wait or wait-all now if it can, or holds it under each key it waits for.
  void wait(Client& c, bool all, std::string stop, std::vector<std::string> keys) {
    Waiter w{&c, all, std::move(stop), std::move(keys), 0, {}};
    if (!w.stop.empty() && kv_.count(w.stop)) return answer(w);
    for (const std::string& k : w.keys)
      if (!kv_.count(k) && std::find(w.on.begin(), w.on.end(), k) == w.on.end()) w.on.push_back(k);
    w.missing = w.on.size();
    if (w.missing == 0) return answer(w);
    if (!w.stop.empty() && std::find(w.on.begin(), w.on.end(), w.stop) == w.on.end()) w.on.push_back(w.stop);
    if (c.waits.size() >= kMaxHeldWaits)
      return drop(c, "more than " + std::to_string(kMaxHeldWaits) + " waits held at once");
    c.waits.push_back(std::move(w));
    Waiter* held = &c.waits.back();
    for (const std::string& k : held->on) waiters_[k].push_back(held);
  }

  // The reply of a waiter whose keys are all set, or whose stop key is.
  void answer(const Waiter& w) {
    Client& c = *w.client;
    if (!w.all) return reply(c, true, &kv_[w.keys.front()]);
    auto stop = w.stop.empty() ? kv_.end() : kv_.find(w.stop);
    const bool stopped = stop != kv_.end();
    append(c, stopped, stopped ? &stop->second : nullptr);
    for (const std::string& k : w.keys) {
      auto it = stopped ? kv_.end() : kv_.find(k);
      append(c, it != kv_.end(), it != kv_.end() ? &it->second : nullptr);
    }
    flush(c);
  }

  // Takes w off every key it is held under but `except` (whose list the caller is walking).
  void unregister(Waiter& w, const std::string& except) {
    for (const std::string& k : w.on) {
      if (k == except) continue;
      auto it = waiters_.find(k);
      if (it == waiters_.end()) continue;
      std::erase(it->second, &w);
      if (it->second.empty()) waiters_.erase(it);
    }
  }

  void reply(Client& c, bool found, const Bytes* value) {
    append(c, found, value);
    flush(c);
  }

  static void append(Client& c, bool found, const Bytes* value) {
    c.out.push_back(found ? 1 : 0);
    if (found) {
      uint64_t len = value ? value->size() : 0;
      auto b = reinterpret_cast<const uint8_t*>(&len);
      c.out.insert(c.out.end(), b, b + 8);
      if (value) c.out.insert(c.out.end(), value->begin(), value->end());
    }
  }

  // `key` was set: every waiter held under it has one key fewer to wait for, or (its stop key) none.
  void wakeWaiters(const std::string& key) {
    auto it = waiters_.find(key);
    if (it == waiters_.end()) return;
    const std::vector<Waiter*> woken = std::move(it->second);
    waiters_.erase(it);
    for (Waiter* w : woken) {
      if (key != w->stop && --w->missing > 0) continue;
      unregister(*w, key);
      Client& c = *w->client;
      if (!c.dead) answer(*w);
      c.waits.remove_if([w](const Waiter& x) { return &x == w; });
    }
  }

  void flush(Client& c) {
    while (c.outOff < c.out.size()) {
      ssize_t n = send(c.fd.get(), c.out.data() + c.outOff, c.out.size() - c.outOff, MSG_NOSIGNAL | MSG_DONTWAIT);
      if (n > 0) {
        c.outOff += static_cast<size_t>(n);
        continue;
      }
      if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)) return watchOut(c, true);
      return kill(c);
    }
    c.out.clear();
    c.outOff = 0;
    watchOut(c, false);
  }

  // Registers c for EPOLLOUT while replies wait in its buffer, and only then.
  void watchOut(Client& c, bool on) {
    if (c.dead || c.wantOut == on) return;
    epoll_event ev{};
    ev.events = EPOLLIN | (on ? EPOLLOUT : 0u);
    ev.data.ptr = &c;
    if (epoll_ctl(epoll_.get(), EPOLL_CTL_MOD, c.fd.get(), &ev) != 0) return kill(c);
    c.wantOut = on;
  }

  static constexpr uint64_t kDropsInFull = 20;
  static constexpr auto kDropLogEvery = std::chrono::seconds(10);

  Fd listen_;
  Fd epoll_;
  auth::Key key_;
  uint64_t drops_ = 0;
  uint64_t dropsLogged_ = kDropsInFull;
  Clock::time_point lastDropLog_{};
  std::string where_;
  std::list<Client> clients_;    // a list: epoll and the waiters hold pointers to clients
  std::list<Client*> helloing_;  // clients in their hello (swept for silence every second)
  std::vector<Client*> dead_;    // killed since the last bury()
  std::map<std::string, Bytes> kv_;
  std::map<std::string, std::vector<Waiter*>> waiters_;  // by key: the waits held until it is set
};

}  // namespace

Status startTcpStoreServer(SockAddr* addr, const Secret& secret) {
  MYR_ASSIGN_OR_RETURN(int fd, listenOn(addr, 4096));
  MYR_TRY(setNonBlocking(fd, true));
  // The server outlives every communicator of this process: it is intentionally never destroyed, so it
  // can carry abort notices until the process exits.
  auto server = std::make_unique<Server>(fd, secret, addr->toString());
  MYR_TRY(server->open());
  server->preset(kStoreOwnerKey, localHostname() + " " + std::to_string(getpid()));
  std::thread([raw = server.release()] { raw->run(); }).detach();
  MYR_LOG(kInfo, kBoot, -1, "rendezvous root listening on " + addr->toString());
  return Status::ok();
}

}  // namespace myriad
