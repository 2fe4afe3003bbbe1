// ringAllGather (see ring_exchange.h). Wire, on each ring connection after the hello: frames of
// u32 length | bytes; a length of kAbortFrame is followed by u32 code | u32 length | the reason, and ends the
// exchange. The store's ring.abort holds u32 code | the reason: every rank fails with the first cause's code.
// Both hellos (ours to the successor, the predecessor's to us) move in one poll loop, never one after the
// other: every rank opens before it accepts, so waiting on one would wait forever.
#include "core/ring_exchange.h"

#include <poll.h>
#include <sys/socket.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <memory>

#include "base/hello.h"
#include "base/log.h"
#include "base/socket.h"

namespace myriad {
namespace {

constexpr uint8_t kRingKind = 'B';  // the hello ident's first byte
constexpr uint32_t kAbortFrame = 0xffffffffu;
constexpr uint32_t kMaxFrame = 1u << 16;
constexpr auto kSlice = std::chrono::milliseconds(50);  // poll slices: the deadline and the abort flag
const char* const kAbortKey = "ring.abort";

// A failure as the wire carries it: u32 code | the reason.
Bytes encodeFailure(const Status& s) {
  Bytes b(4 + s.message().size());
  const uint32_t code = static_cast<uint32_t>(s.code());
  std::memcpy(b.data(), &code, 4);
  std::memcpy(b.data() + 4, s.message().data(), s.message().size());
  return b;
}

Status failure(const uint8_t* p, size_t n) {
  uint32_t code = 0;
  std::memcpy(&code, p, 4);
  const Code known[] = {Code::kSystemError,  Code::kInternalError, Code::kInvalidArgument,
                        Code::kInvalidUsage, Code::kRemoteError,   Code::kTimeout};
  Code c = Code::kRemoteError;
  for (Code k : known)
    if (static_cast<uint32_t>(k) == code) c = k;
  return Status(c, std::string(reinterpret_cast<const char*>(p) + 4, n - 4));
}

HelloIdent identOf(int32_t from, int32_t to) {
  HelloIdent id{kRingKind};
  std::memcpy(id.data() + 4, &from, 4);
  std::memcpy(id.data() + 8, &to, 4);
  return id;
}

class Ring {
 public:
  explicit Ring(const RingExchange& x)
      : x_(x),
        succ_((x.rank + 1) % x.nranks),
        pred_((x.rank + x.nranks - 1) % x.nranks),
        deadline_(Clock::now() + std::chrono::milliseconds(x.timeoutMs)) {}

  Result<std::vector<Bytes>> run(const Bytes& mine) {
    if (mine.size() >= kMaxFrame)
      return invalidArgument("ring exchange: a description of " + std::to_string(mine.size()) + " bytes is too long");
    Status s = listen();
    if (s.isOk()) s = connect();
    std::vector<Bytes> all(static_cast<size_t>(x_.nranks));
    all[static_cast<size_t>(x_.rank)] = mine;
    for (int step = 0; s.isOk() && step < x_.nranks - 1; ++step) {
      const int give = (x_.rank - step + x_.nranks) % x_.nranks;
      const int take = (x_.rank - step - 1 + x_.nranks) % x_.nranks;
      s = writeFrame(all[static_cast<size_t>(give)]);
      if (s.isOk()) s = readFrame(&all[static_cast<size_t>(take)]);
    }
    if (!s.isOk()) return giveUp(s);
    return all;
  }

 private:
  std::string self() const { return "rank " + std::to_string(x_.rank); }
  std::string succName() const { return "rank " + std::to_string(succ_); }
  std::string predName() const { return "rank " + std::to_string(pred_); }

  Status expired(const std::string& waiting) const {
    if (x_.cancel && x_.cancel->load()) return Status(Code::kRemoteError, "ring exchange: aborted while " + waiting);
    if (Clock::now() >= deadline_)
      return Status(Code::kTimeout, "ring exchange: " + self() + " gave up after " + std::to_string(x_.timeoutMs) +
                                        " ms (MYRIAD_INIT_TIMEOUT_MS) " + waiting);
    return Status::ok();
  }

  // Another rank gave up and said why on the store: every rank fails with its reason. `now`: read it now, not
  // on the back-off's schedule.
  Status abortNotice(bool now_ = false) {
    const auto now = Clock::now();
    if (now < nextNoticeCheck_ && !now_) return Status::ok();
    noticeEvery_ = std::min(noticeEvery_ * 2, std::chrono::milliseconds(2000));  // rarely, at scale
    nextNoticeCheck_ = now + noticeEvery_;
    auto notice = x_.store->tryGet(kAbortKey);
    if (!notice.isOk() || notice.value().size() < 4) return Status::ok();
    aborted_ = true;
    return failure(notice.value().data(), notice.value().size());
  }

  Status listen() {
    MYR_ASSIGN_OR_RETURN(SockAddr addr, chooseListenAddress(x_.ifname));
    addr.setPort(0);
    MYR_ASSIGN_OR_RETURN(int fd, listenOn(&addr, 64));
    listen_ = Fd(fd);
    MYR_TRY(setNonBlocking(fd, true));
    Writer w;
    w.i32(x_.nranks);
    w.str(addr.toString());
    return x_.store->set("ring." + std::to_string(x_.rank), w.bytes());
  }

  // The successor's address from the store (waited for: it may start late), then both hellos.
  Status connect() {
    Bytes where;
    while (true) {
      MYR_TRY(expired("waiting for " + succName() + " to publish its ring address"));
      MYR_TRY(abortNotice());
      auto got = x_.store->get("ring." + std::to_string(succ_), 1000, x_.cancel);
      if (got.isOk()) {
        where = std::move(got.value());
        break;
      }
      if (got.status().code() != Code::kTimeout) return got.status();
    }
    Reader rd(where);
    const int32_t theirN = rd.i32();
    const std::string text = rd.str(256);
    if (rd.failed()) return invalidArgument("ring exchange: malformed ring address of " + succName());
    if (theirN != x_.nranks)
      return invalidUsage(succName() + " was started with nranks=" + std::to_string(theirN) + " but " + self() +
                          " with nranks=" + std::to_string(x_.nranks));
    MYR_ASSIGN_OR_RETURN(SockAddr addr, SockAddr::parse(text));
    // It listened before it published: a refusal means it is gone (a second covers a SYN backlog that is full).
    auto fd = connectTo(addr, std::min(deadline_, Clock::now() + std::chrono::seconds(1)), x_.cancel);
    if (!fd.isOk())
      return Status(Code::kRemoteError, "ring exchange: " + succName() + " at " + text + " refused the ring (" +
                                            fd.status().message() + "): it exited or failed");
    out_ = Fd(fd.value());
    MYR_TRY(setNonBlocking(out_.get(), true));
    Handshake opener(Handshake::Role::kOpener, x_.key, identOf(x_.rank, succ_));
    struct Incoming {
      Fd fd;
      std::unique_ptr<Handshake> hello;
    };
    std::vector<Incoming> incoming;
    while (!opener.done() || in_.get() < 0) {
      MYR_TRY(expired(!opener.done() ? "on the hello to " + succName() : "waiting for " + predName() + " to connect"));
      MYR_TRY(abortNotice());
      if (!opener.done()) {
        Status s = opener.step(out_.get());
        if (!s.isOk()) return Status(s.code(), "ring exchange: hello to " + succName() + ": " + s.message());
      }
      while (in_.get() < 0) {
        int c = ::accept4(listen_.get(), nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
        if (c < 0) break;
        incoming.push_back({Fd(c), std::make_unique<Handshake>(Handshake::Role::kAccepter, x_.key, HelloIdent{})});
      }
      for (auto it = incoming.begin(); in_.get() < 0 && it != incoming.end();) {
        Status s = it->hello->step(it->fd.get());
        const bool wrong = s.isOk() && it->hello->done() && it->hello->ident() != identOf(pred_, x_.rank);
        if (!s.isOk() || wrong) {  // hostile bytes, a wrong secret, another communicator's rank: refused
          MYR_LOG(kWarn, kInit, x_.rank,
                  "ring exchange: refused a connection from " + socketEnds(it->fd.get()) + ": " +
                      (wrong ? std::string("it is not ") + predName() + " of this communicator" : s.message()));
          it = incoming.erase(it);
        } else if (it->hello->done()) {
          in_ = std::move(it->fd);
        } else {
          ++it;
        }
      }
      if (opener.done() && in_.get() >= 0) break;
      std::vector<pollfd> fds{{listen_.get(), POLLIN, 0}};
      if (!opener.done()) fds.push_back({out_.get(), POLLIN, 0});
      for (const Incoming& i : incoming) fds.push_back({i.fd.get(), POLLIN, 0});
      ::poll(fds.data(), fds.size(), static_cast<int>(kSlice.count()));
    }
    listen_.reset();  // nobody else may join this ring
    return Status::ok();
  }

  // Waits until `fd` is ready for `events`, the deadline or an abort.
  Status await(int fd, short events, const std::string& waiting) {
    while (true) {
      MYR_TRY(expired(waiting));
      MYR_TRY(abortNotice());
      pollfd p{fd, events, 0};
      int n = ::poll(&p, 1, static_cast<int>(kSlice.count()));
      if (n > 0) return Status::ok();
      if (n < 0 && errno != EINTR) return systemError("ring exchange: poll", errno);
    }
  }

  Status writeAll(const void* data, size_t n) {
    const auto* p = static_cast<const uint8_t*>(data);
    while (n > 0) {
      ssize_t k = ::send(out_.get(), p, n, MSG_NOSIGNAL);
      if (k > 0) {
        p += k, n -= static_cast<size_t>(k);
        continue;
      }
      if (k < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)) {
        MYR_TRY(await(out_.get(), POLLOUT, "sending to " + succName()));
        continue;
      }
      return Status(Code::kRemoteError, "ring exchange: " + succName() + " is gone (send: " +
                                            std::string(std::strerror(errno)) + "): it exited or failed");
    }
    return Status::ok();
  }

  Status readAll(void* data, size_t n) {
    auto* p = static_cast<uint8_t*>(data);
    while (n > 0) {
      ssize_t k = ::recv(in_.get(), p, n, 0);
      if (k > 0) {
        p += k, n -= static_cast<size_t>(k);
        continue;
      }
      if (k < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)) {
        MYR_TRY(await(in_.get(), POLLIN, "waiting for " + predName()));
        continue;
      }
      return Status(Code::kRemoteError, "ring exchange: " + predName() + " closed the ring (" +
                                            (k == 0 ? std::string("end of stream") : std::strerror(errno)) +
                                            "): it exited or failed");
    }
    return Status::ok();
  }

  Status writeFrame(const Bytes& b) {
    uint32_t len = static_cast<uint32_t>(b.size());
    MYR_TRY(writeAll(&len, 4));
    return writeAll(b.data(), b.size());
  }

  Status readFrame(Bytes* b) {
    uint32_t len = 0;
    MYR_TRY(readAll(&len, 4));
    if (len == kAbortFrame) {
      uint32_t n = 0;
      MYR_TRY(readAll(&n, 4));
      if (n < 4 || n > kMaxFrame)
        return Status(Code::kRemoteError, "ring exchange: malformed abort from " + predName());
      Bytes why(n);
      MYR_TRY(readAll(why.data(), n));
      relayed_ = true;  // giveUp passes it on
      return failure(why.data(), why.size());
    }
    if (len >= kMaxFrame)
      return Status(Code::kRemoteError, "ring exchange: " + predName() + " sent a frame of " + std::to_string(len) +
                                            " bytes (at most " + std::to_string(kMaxFrame) + ")");
    b->resize(len);
    return readAll(b->data(), len);
  }

  // The exchange failed here. A neighbour gone may be the echo of another rank's failure: its notice on the
  // store, when there is one, is the reason. Otherwise the successor hears why (and passes it on), and so
  // does the store for ranks not in the ring yet; both best effort, within a short while.
  Status giveUp(const Status& why) {
    if (!aborted_ && !relayed_ && why.code() != Code::kTimeout) {  // (every rank's own deadline passes alike)
      Status notice = abortNotice(true);
      if (!notice.isOk()) return notice;
    }
    if (aborted_) return why;  // the store's notice: everyone reads it there
    const Status told(why.code(), relayed_ ? why.message() : self() + ": " + why.message());
    Bytes wire = encodeFailure(told);
    if (wire.size() > kMaxFrame) wire.resize(kMaxFrame);
    if (out_.get() >= 0) {
      deadline_ = std::min(deadline_, Clock::now() + std::chrono::milliseconds(200));
      const uint32_t mark = kAbortFrame, n = static_cast<uint32_t>(wire.size());
      if (writeAll(&mark, 4).isOk() && writeAll(&n, 4).isOk()) writeAll(wire.data(), n).ignore();
    }
    if (!relayed_) x_.store->set(kAbortKey, wire).ignore();
    return told;
  }

  const RingExchange& x_;
  const int succ_, pred_;
  Clock::time_point deadline_;
  Fd listen_, out_, in_;
  std::chrono::milliseconds noticeEvery_{100};
  Clock::time_point nextNoticeCheck_ = Clock::now() + noticeEvery_;
  bool relayed_ = false, aborted_ = false;
};

}  // namespace

Result<std::vector<Bytes>> ringAllGather(const RingExchange& x, const Bytes& mine) {
  if (x.nranks <= 1) return std::vector<Bytes>{mine};
  Ring ring(x);
  return ring.run(mine);
}

}  // namespace myriad
