// bootstrapAllGather (see bootstrap_allgather.h). Wire, on each connection after the hello: one round frame,
// or an abort frame that ends the exchange (bootstrap_frames.h). The store's boot.abort holds a failure:
// every rank fails with the first cause's code. All hellos, and each round's send and receive, move
// in one poll loop, never one after the other: a rank sends to r - d while r + d sends to it, so waiting on
// either alone could wait forever.
#include "core/bootstrap_allgather.h"

#include <poll.h>
#include <sys/socket.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <memory>

#include "base/hello.h"
#include "base/log.h"
#include "base/socket.h"
#include "core/bootstrap_frames.h"

namespace myriad {
namespace {

constexpr uint8_t kBootKind = 'B';  // the hello ident's first byte; the second is the round
using bootframe::decodeFailure;
using bootframe::kAbortFrame;
using bootframe::kMaxDescription;
constexpr auto kSlice = std::chrono::milliseconds(50);  // poll slices: the deadline and the abort flag
const char* const kAbortKey = "boot.abort";

HelloIdent identOf(int round, int32_t from, int32_t to) {
  HelloIdent id{kBootKind, static_cast<uint8_t>(round)};
  std::memcpy(id.data() + 4, &from, 4);
  std::memcpy(id.data() + 8, &to, 4);
  return id;
}

class Exchange {
 public:
  explicit Exchange(const BootstrapExchange& x)
      : x_(x), deadline_(Clock::now() + std::chrono::milliseconds(x.timeoutMs)) {
    while ((1 << rounds_) < x.nranks) ++rounds_;
    out_.resize(static_cast<size_t>(rounds_));
    in_.resize(static_cast<size_t>(rounds_));
    midFrame_.assign(static_cast<size_t>(rounds_), false);
  }

  Result<std::vector<Bytes>> run(const Bytes& mine) {
    if (mine.size() >= kMaxDescription)
      return invalidArgument("bootstrap: a description of " + std::to_string(mine.size()) + " bytes is too long");
    all_.assign(static_cast<size_t>(x_.nranks), Bytes());
    all_[static_cast<size_t>(x_.rank)] = mine;
    Status s = listen();
    if (s.isOk()) s = connect();
    for (int k = 0; s.isOk() && k < rounds_; ++k) s = round(k);
    // The notice goes on the store before the listener closes: a rank refused by a closed listener would
    // otherwise give up first with "cannot connect", and every rank would report that instead of the cause.
    if (!s.isOk()) s = giveUp(s);
    listen_.reset();
    if (!s.isOk()) return s;
    return std::move(all_);
  }

 private:
  int n() const { return x_.nranks; }
  int to(int k) const { return (x_.rank - (1 << k) % n() + n()) % n(); }
  int from(int k) const { return (x_.rank + (1 << k)) % n(); }
  int count(int k) const { return std::min(1 << k, n() - (1 << k)); }
  static std::string name(int rank) { return "rank " + std::to_string(rank); }

  Status expired(const std::string& waiting) const {
    if (x_.cancel && x_.cancel->load()) return Status(Code::kRemoteError, "bootstrap: aborted while " + waiting);
    if (Clock::now() >= deadline_) return late(waiting);
    return Status::ok();
  }
  Status late(const std::string& waiting) const {
    return Status(Code::kTimeout, "bootstrap: " + name(x_.rank) + " gave up after " + std::to_string(x_.timeoutMs) +
                                      " ms (MYRIAD_INIT_TIMEOUT_MS) " + waiting);
  }

  // Another rank gave up and said why on the store. `now`: read it at once, not on the back-off's schedule.
  Status abortNotice(bool now = false) {
    const auto t = Clock::now();
    if (t < nextNoticeCheck_ && !now) return Status::ok();
    nextNoticeCheck_ = t + abortNoticeWait(x_.nranks, ++noticeReads_);
    auto notice = x_.store->tryGet(kAbortKey);
    if (!notice.isOk()) return Status::ok();
    told_ = true;
    return decodeFailure(notice.value().data(), notice.value().size());
  }

  Status listen() {
    MYR_ASSIGN_OR_RETURN(SockAddr addr, chooseListenAddress(x_.ifname));
    addr.setPort(0);
    MYR_ASSIGN_OR_RETURN(int fd, listenOn(&addr, 128));
    listen_ = Fd(fd);
    MYR_TRY(setNonBlocking(fd, true));
    // A second process started as this rank finds the first one's address (two at once: one of them waits
    // for connections that go to the other, and times out).
    if (x_.store->tryGet("boot." + std::to_string(x_.rank)).isOk()) {
      told_ = true;  // not a member: the communicator is not told (giveUp), its ranks go on
      return invalidUsage("another process already joined as " + name(x_.rank) +
                          " of this communicator (its bootstrap address is on the store)");
    }
    Writer w;
    w.i32(n());
    w.str(addr.toString());
    return x_.store->set("boot." + std::to_string(x_.rank), w.bytes());
  }

  // The addresses of the ranks we send to, in one request (they may start late): a rank that gave up ends
  // the wait with its notice, so nothing is polled meanwhile.
  Result<std::vector<SockAddr>> addresses() {
    std::vector<std::string> keys;
    for (int k = 0; k < rounds_; ++k) keys.push_back("boot." + std::to_string(to(k)));
    const auto left = std::chrono::ceil<std::chrono::milliseconds>(deadline_ - Clock::now()).count();
    auto got = x_.store->waitAll(keys, kAbortKey, static_cast<int>(std::max<int64_t>(left, 0)), x_.cancel);
    if (!got.isOk()) {
      // At the deadline, the ranks that are late are named (a try-get each, once).
      if (got.status().code() == Code::kTimeout)
        return late("waiting for " + missing(keys) + " to publish their addresses");
      const std::string waiting = "waiting for the ranks it sends to to publish their addresses";
      MYR_TRY(expired(waiting));
      return Status(got.status().code(), "bootstrap: " + waiting + ": " + got.status().message());
    }
    if (got.value().stopped) {
      told_ = true;
      return decodeFailure(got.value().stop.data(), got.value().stop.size());
    }
    std::vector<SockAddr> out;
    for (int k = 0; k < rounds_; ++k) {
      Reader rd(got.value().values[static_cast<size_t>(k)]);
      const int32_t theirN = rd.i32();
      const std::string text = rd.str(256);
      if (rd.failed()) return invalidArgument("bootstrap: malformed address of " + name(to(k)));
      if (theirN != n())
        return invalidUsage(name(to(k)) + " was started with nranks=" + std::to_string(theirN) + " but " +
                            name(x_.rank) + " with nranks=" + std::to_string(n()));
      MYR_ASSIGN_OR_RETURN(SockAddr addr, SockAddr::parse(text));
      out.push_back(addr);
    }
    return out;
  }

  // The ranks among `keys` ("boot.<rank>") whose address is not on the store, for a message.
  std::string missing(const std::vector<std::string>& keys) {
    std::string out;
    for (const std::string& key : keys)
      if (!x_.store->tryGet(key).isOk()) out += (out.empty() ? "" : ", ") + key.substr(5);
    return out.empty() ? "the ranks it sends to" : "rank(s) " + out;
  }

  // One connection to each rank we send to, one from each rank we take from, all hellos in one loop.
  Status connect() {
    std::vector<std::unique_ptr<Handshake>> openers(static_cast<size_t>(rounds_));
    MYR_ASSIGN_OR_RETURN(std::vector<SockAddr> addrs, addresses());
    for (int k = 0; k < rounds_; ++k) {
      const SockAddr& addr = addrs[static_cast<size_t>(k)];
      // It listened before it published: a refusal means it is gone (a second covers a full SYN backlog).
      auto fd = connectTo(addr, std::min(deadline_, Clock::now() + std::chrono::seconds(1)), x_.cancel);
      if (!fd.isOk()) {
        const bool refused = fd.status().message().find("refused") != std::string::npos;
        return Status(refused ? Code::kRemoteError : fd.status().code(),
                      "bootstrap: cannot connect to " + name(to(k)) + " at " + addr.toString() + ": " +
                          fd.status().message() + (refused ? " (it exited or failed)" : ""));
      }
      out_[static_cast<size_t>(k)] = Fd(fd.value());
      MYR_TRY(setNonBlocking(fd.value(), true));
      openers[static_cast<size_t>(k)] =
          std::make_unique<Handshake>(Handshake::Role::kOpener, x_.key, identOf(k, x_.rank, to(k)));
    }
    struct Incoming {
      Fd fd;
      std::unique_ptr<Handshake> hello;
    };
    std::vector<Incoming> incoming;
    int openersLeft = rounds_, inLeft = rounds_;
    while (openersLeft > 0 || inLeft > 0) {
      MYR_TRY(expired(openersLeft > 0 ? "on its hellos" : "waiting for the ranks that send to it to connect"));
      MYR_TRY(abortNotice());
      std::vector<pollfd> fds{{listen_.get(), POLLIN, 0}};
      for (int k = 0; k < rounds_; ++k) {
        Handshake* h = openers[static_cast<size_t>(k)].get();
        if (!h || h->done()) continue;
        Status s = h->step(out_[static_cast<size_t>(k)].get());
        if (!s.isOk())
          return Status(s.code(),
                        "bootstrap: hello to " + name(to(k)) + " (round " + std::to_string(k) + "): " + s.message());
        if (h->done()) {
          --openersLeft;
        } else {
          fds.push_back({out_[static_cast<size_t>(k)].get(), POLLIN, 0});
        }
      }
      while (inLeft > 0) {
        int c = ::accept4(listen_.get(), nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
        if (c < 0) break;
        incoming.push_back({Fd(c), std::make_unique<Handshake>(Handshake::Role::kAccepter, x_.key, HelloIdent{})});
      }
      for (auto it = incoming.begin(); it != incoming.end();) {
        Status s = it->hello->step(it->fd.get());
        int k = -1;
        if (s.isOk() && it->hello->done()) {
          const HelloIdent& id = it->hello->ident();
          for (int j = 0; j < rounds_; ++j)
            if (id == identOf(j, from(j), x_.rank) && in_[static_cast<size_t>(j)].get() < 0) k = j;
        }
        if (!s.isOk() || (it->hello->done() && k < 0)) {  // hostile bytes, a wrong key, a stranger: refused
          MYR_LOG(kWarn, kInit, x_.rank,
                  "bootstrap: refused a connection from " + socketEnds(it->fd.get()) + ": " +
                      (s.isOk() ? std::string("not a rank this one takes from, in this communicator") : s.message()));
          it = incoming.erase(it);
        } else if (k >= 0) {
          in_[static_cast<size_t>(k)] = std::move(it->fd);
          --inLeft;
          it = incoming.erase(it);
        } else {
          fds.push_back({it->fd.get(), POLLIN, 0});
          ++it;
        }
      }
      if (openersLeft > 0 || inLeft > 0) ::poll(fds.data(), fds.size(), static_cast<int>(kSlice.count()));
    }
    return Status::ok();
  }

  // Round k: our first count(k) descriptions (ours and on) to to(k), as many from from(k) (its and on).
  Status round(int k) {
    const int c = count(k);
    std::vector<const Bytes*> ours;
    for (int i = 0; i < c; ++i) ours.push_back(&all_[static_cast<size_t>((x_.rank + i) % n())]);
    const Bytes frame = bootframe::encodeRound(ours);
    const int out = out_[static_cast<size_t>(k)].get(), in = in_[static_cast<size_t>(k)].get();
    size_t sent = 0;
    uint32_t header = 0;
    size_t gotHeader = 0, got = 0;
    Bytes incoming;
    const std::string waiting =
        "in round " + std::to_string(k) + " (sending to " + name(to(k)) + ", taking from " + name(from(k)) + ")";
    while (sent < frame.size() || gotHeader < 4 || got < incoming.size()) {
      MYR_TRY(expired(waiting));
      MYR_TRY(abortNotice());
      bool moved = false;
      if (sent < frame.size()) {
        ssize_t w = ::send(out, frame.data() + sent, frame.size() - sent, MSG_NOSIGNAL);
        if (w > 0) {
          sent += static_cast<size_t>(w), moved = true;
          midFrame_[static_cast<size_t>(k)] = sent < frame.size();
        } else if (w < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) {
          return Status(Code::kRemoteError, "bootstrap: " + name(to(k)) + " is gone (send: " + std::strerror(errno) +
                                                "): it exited or failed");
        }
      }
      while (gotHeader < 4 || got < incoming.size()) {
        uint8_t* dst = gotHeader < 4 ? reinterpret_cast<uint8_t*>(&header) + gotHeader : incoming.data() + got;
        const size_t want = gotHeader < 4 ? 4 - gotHeader : incoming.size() - got;
        ssize_t r = ::recv(in, dst, want, 0);
        if (r == 0 || (r < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR))
          return Status(Code::kRemoteError, "bootstrap: " + name(from(k)) + " closed its connection (" +
                                                (r == 0 ? std::string("end of stream") : std::strerror(errno)) +
                                                "): it exited or failed");
        if (r < 0) break;
        moved = true;
        if (gotHeader < 4) {
          gotHeader += static_cast<size_t>(r);
          if (gotHeader == 4) {
            const bool abort = header == kAbortFrame;
            const uint64_t most = abort ? kMaxDescription : bootframe::maxRoundBody(c);
            if (!abort && header > most)
              return Status(Code::kRemoteError, "bootstrap: " + name(from(k)) + " sent a frame of " +
                                                    std::to_string(header) + " bytes (at most " + std::to_string(most) +
                                                    ")");
            if (abort) header = 0;  // the failure's own length follows
            incoming.resize(abort ? 4 : header);
            abortFrame_ = abort;
          }
        } else {
          got += static_cast<size_t>(r);
          if (abortFrame_ && got == 4 && incoming.size() == 4) {  // the length of the failure notice
            uint32_t len = 0;
            std::memcpy(&len, incoming.data(), 4);
            if (len > kMaxDescription) return Status(Code::kRemoteError, "bootstrap: a malformed abort frame");
            incoming.resize(4 + len);
          }
        }
      }
      if (moved) continue;
      std::vector<pollfd> fds;
      if (sent < frame.size()) fds.push_back({out, POLLOUT, 0});
      fds.push_back({in, POLLIN, 0});
      ::poll(fds.data(), fds.size(), static_cast<int>(kSlice.count()));
    }
    if (abortFrame_) {
      relayed_ = true;
      return decodeFailure(incoming.data() + 4, incoming.size() - 4);
    }
    auto theirs = bootframe::decodeRound(incoming, c);
    if (!theirs.isOk())
      return Status(Code::kRemoteError, "bootstrap: " + name(from(k)) + " sent " + theirs.status().message());
    for (int i = 0; i < c; ++i)
      all_[static_cast<size_t>((from(k) + i) % n())] = std::move(theirs.value()[static_cast<size_t>(i)]);
    return Status::ok();
  }

  // The exchange failed here. A peer gone may be the echo of another rank's failure: its notice on the store,
  // when there is one, is the reason (a deadline is every rank's own). Otherwise the store hears why, and so
  // do the ranks we send to, where a connection is between frames (best effort, briefly).
  Status giveUp(const Status& why) {
    if (!told_ && !relayed_ && why.code() != Code::kTimeout) {
      Status notice = abortNotice(true);
      if (!notice.isOk()) return notice;
    }
    if (told_) return why;
    const Status failed(why.code(), relayed_ ? why.message() : name(x_.rank) + ": " + why.message());
    const Bytes wire = bootframe::encodeFailure(failed);
    if (!relayed_) x_.store->set(kAbortKey, wire).ignore();
    const Bytes frame = bootframe::encodeAbort(wire);
    for (size_t k = 0; k < out_.size(); ++k)
      if (out_[k].get() >= 0 && !midFrame_[k]) (void)::send(out_[k].get(), frame.data(), frame.size(), MSG_NOSIGNAL);
    return failed;
  }

  const BootstrapExchange& x_;
  Clock::time_point deadline_;
  int rounds_ = 0;
  Fd listen_;
  std::vector<Fd> out_, in_;  // by round
  std::vector<bool> midFrame_;
  std::vector<Bytes> all_;
  int noticeReads_ = 0;  // reads of the abort notice on the back-off's schedule so far
  Clock::time_point nextNoticeCheck_ = Clock::now() + abortNoticeWait(x_.nranks, 0);
  bool told_ = false, relayed_ = false, abortFrame_ = false;
};

}  // namespace

std::chrono::milliseconds abortNoticeWait(int nranks, int k) {
  using std::chrono::milliseconds;
  const milliseconds spread{(static_cast<int64_t>(std::max(nranks, 1)) + 9) / 10};  // n x 0.1 ms, rounded up
  const milliseconds cap = std::max(milliseconds(2000), spread);
  milliseconds wait{100};
  for (int i = 0; i < k && wait < cap; ++i) wait *= 2;
  return std::clamp(wait, spread, cap);
}

Result<std::vector<Bytes>> bootstrapAllGather(const BootstrapExchange& x, const Bytes& mine) {
  if (x.nranks <= 1) return std::vector<Bytes>{mine};
  Exchange e(x);
  return e.run(mine);
}

}  // namespace myriad
