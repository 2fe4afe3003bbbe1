// The liveness thread: heartbeats, pidfds, fates flooded over the watch graph, queries and their answers
// (the design is in core/liveness.h).
#include "core/liveness.h"

#include <poll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <mutex>

#include "base/log.h"
#include "core/duration_text.h"
#include "core/process_state.h"

namespace myriad {
namespace {

using liveness::Datagram;
using liveness::Fate;
using liveness::FateKind;
using liveness::Kind;

// Liveness channels still open in this process: they say bye when it exits normally (atexit), so that
// their peers do not take a clean exit for a death.
struct Registry {
  std::mutex mu;
  std::vector<Liveness*> open;
};
Registry& registry() {
  static Registry* r = new Registry();  // never destroyed: the atexit handler may run after static destructors
  return *r;
}
void sayByeAtExit();
void enroll(Liveness* l) {
  static std::once_flag once;
  std::call_once(once, [] { std::atexit(sayByeAtExit); });
  std::lock_guard<std::mutex> lock(registry().mu);
  registry().open.push_back(l);
}
void withdraw(Liveness* l) {
  std::lock_guard<std::mutex> lock(registry().mu);
  auto& v = registry().open;
  v.erase(std::remove(v.begin(), v.end(), l), v.end());
}

bool sameAddress(const sockaddr_storage& a, socklen_t alen, const SockAddr& b) {
  if (a.ss_family != b.ss.ss_family) return false;
  if (a.ss_family == AF_INET) {
    auto& x = reinterpret_cast<const sockaddr_in&>(a);
    auto& y = reinterpret_cast<const sockaddr_in&>(b.ss);
    return alen >= sizeof(sockaddr_in) && x.sin_addr.s_addr == y.sin_addr.s_addr;
  }
  if (a.ss_family == AF_INET6) {
    auto& x = reinterpret_cast<const sockaddr_in6&>(a);
    auto& y = reinterpret_cast<const sockaddr_in6&>(b.ss);
    return alen >= sizeof(sockaddr_in6) && std::memcmp(&x.sin6_addr, &y.sin6_addr, sizeof(x.sin6_addr)) == 0;
  }
  return false;
}

}  // namespace

std::vector<int> Liveness::neighbours(int rank, int nranks) {
  std::vector<int> out;
  if (nranks <= 1) return out;
  out.push_back((rank + 1) % nranks);
  out.push_back((rank + nranks - 1) % nranks);
  if (rank > 0) out.push_back((rank - 1) / 2);
  for (int child : {2 * rank + 1, 2 * rank + 2})
    if (child < nranks) out.push_back(child);
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  out.erase(std::remove(out.begin(), out.end(), rank), out.end());
  return out;
}

auth::Key Liveness::tagKey(const uint8_t* secret, size_t secretBytes, const std::string& tag) {
  return auth::deriveKey(secret, secretBytes, "myriad liveness v2 " + tag);
}

uint64_t Liveness::commKey(const uint8_t* secret, size_t secretBytes, const std::string& tag) {
  // FNV-1a: tells communicators apart; it is no authentication (a datagram must also come from the host
  // address its rank published).
  uint64_t h = 0xcbf29ce484222325ull;
  auto mix = [&h](uint8_t b) { h = (h ^ b) * 0x100000001b3ull; };
  for (size_t i = 0; i < secretBytes; ++i) mix(secret[i]);
  for (char c : tag) mix(static_cast<uint8_t>(c));
  return h;
}

Result<std::unique_ptr<Liveness>> Liveness::bind(const SockAddr& host) {
  std::unique_ptr<Liveness> l(new Liveness());
  l->addr_ = host;
  l->addr_.setPort(0);
  l->fd_ = socket(host.family(), SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (l->fd_ < 0) return Status(Code::kSystemError, std::string("liveness socket: ") + std::strerror(errno));
  if (::bind(l->fd_, reinterpret_cast<const sockaddr*>(&l->addr_.ss), l->addr_.len) != 0)
    return Status(Code::kSystemError, "liveness socket: bind to " + l->addr_.toString() + ": " + std::strerror(errno));
  socklen_t len = sizeof(l->addr_.ss);
  getsockname(l->fd_, reinterpret_cast<sockaddr*>(&l->addr_.ss), &len);
  l->addr_.len = len;
  l->senders_.push_back(l->fd_);
  SockAddr any = l->addr_;
  any.setPort(0);
  for (int i = 1; i < kPaths; ++i) {
    int fd = socket(host.family(), SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0) break;
    if (::bind(fd, reinterpret_cast<const sockaddr*>(&any.ss), any.len) != 0) {
      close(fd);
      break;
    }
    l->senders_.push_back(fd);
  }
  l->wakeFd_ = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
  if (l->wakeFd_ < 0) return Status(Code::kSystemError, std::string("liveness eventfd: ") + std::strerror(errno));
  return l;
}

Liveness::~Liveness() {
  leave();
  for (const Local& l : locals_)
    if (l.pidfd >= 0) close(l.pidfd);
  if (wakeFd_ >= 0) close(wakeFd_);
  for (int fd : senders_)
    if (fd != fd_) close(fd);
  if (fd_ >= 0) close(fd_);
}

void Liveness::start(Options options) {
  opt_ = std::move(options);
  neighbours_ = neighbours(opt_.rank, opt_.nranks);
  lastHeard_.assign(neighbours_.size(), Clock::now());
  probed_.assign(neighbours_.size(), Clock::time_point{});
  const PeerInfo& me = (*opt_.peers)[static_cast<size_t>(opt_.rank)];
  for (const PeerInfo& p : *opt_.peers)
    if (p.rank != opt_.rank && p.hostId == me.hostId && p.pidNamespace == me.pidNamespace && p.pid != me.pid)
      locals_.push_back(Local{p.rank, openPidfd(p.pid)});
  owner_ = getpid();
  enroll(this);
  thread_ = std::thread([this] { run(); });
}

void Liveness::leave() {
  if (left_) return;
  left_ = true;
  const bool started = thread_.joinable();
  stop_.store(true);
  uint64_t one = 1;
  if (wakeFd_ >= 0) (void)!write(wakeFd_, &one, sizeof(one));
  if (thread_.joinable()) thread_.join();
  if (!started) return;
  withdraw(this);
  {
    std::lock_guard<std::mutex> lock(mu_);
    lastSelf_ = opt_.self();
  }
  sayBye();
}

void Liveness::sayBye() {
  // Everyone who watches this rank: its neighbours (heartbeats) and the ranks of its host (pidfds).
  std::vector<int> to = neighbours_;
  for (const Local& l : locals_) to.push_back(l.rank);
  std::sort(to.begin(), to.end());
  to.erase(std::unique(to.begin(), to.end()), to.end());
  for (int r : to) sendTo(r, Kind::kBye);
}

namespace {
void sayByeAtExit() {
  std::lock_guard<std::mutex> lock(registry().mu);
  for (Liveness* l : registry().open) l->sayByeAtExitOf();
}
}  // namespace

void Liveness::run() {
  const auto period = std::chrono::milliseconds(opt_.heartbeatMs);
  auto nextBeat = Clock::now();
  auto lastLoop = Clock::now();
  std::vector<pollfd> fds;
  fds.push_back(pollfd{fd_, POLLIN, 0});
  fds.push_back(pollfd{wakeFd_, POLLIN, 0});
  for (const Local& l : locals_) fds.push_back(pollfd{l.pidfd, POLLIN, 0});  // -1: ignored by poll
  while (!stop_.load()) {
    auto wait = std::chrono::duration_cast<std::chrono::milliseconds>(nextBeat - Clock::now()).count();
    poll(fds.data(), fds.size(), static_cast<int>(std::max<int64_t>(0, wait)));
    if (stop_.load()) break;
    auto now = Clock::now();
    // Not scheduled for a long while (a loaded or suspended machine): the silence of the neighbours in that
    // time says nothing about them.
    if (now - lastLoop > std::max(4 * period, std::chrono::milliseconds(opt_.deadMs / 2)))
      std::fill(lastHeard_.begin(), lastHeard_.end(), now);
    lastLoop = now;
    if (fds[1].revents) {
      uint64_t n;
      (void)!read(wakeFd_, &n, sizeof(n));
    }
    receive(now);  // before the pidfds: a bye is always queued before its sender's exit
    for (size_t i = 0; i < locals_.size(); ++i) {
      if (!(fds[2 + i].revents & POLLIN)) continue;
      fds[2 + i].fd = -1;
      const PeerInfo& p = (*opt_.peers)[static_cast<size_t>(locals_[i].rank)];
      learn(Fate{p.rank, FateKind::kDead,
                 p.describe() + " exited (seen by rank " + std::to_string(opt_.rank) + " through a pidfd)"});
    }
    if (now >= nextBeat) {
      {
        std::lock_guard<std::mutex> lock(mu_);
        lastSelf_ = opt_.self();
      }
      for (int r : neighbours_)
        if (!fateOf(r)) sendTo(r, Kind::kHeartbeat);
      checkProcesses();
      nextBeat = now + period;
    }
    checkNeighbours(now);
    std::vector<int> ask;
    {
      std::lock_guard<std::mutex> lock(mu_);
      ask.swap(wanted_);
    }
    for (int r : ask) sendTo(r, Kind::kQuery);
  }
}

void Liveness::receive(Clock::time_point now) {
  uint8_t buf[liveness::kMaxDatagram + liveness::kTagBytes + 1];
  for (;;) {
    sockaddr_storage src{};
    socklen_t srclen = sizeof(src);
    ssize_t n = recvfrom(fd_, buf, sizeof(buf), MSG_DONTWAIT, reinterpret_cast<sockaddr*>(&src), &srclen);
    if (n < 0) {
      if (errno == EINTR) continue;
      return;  // EAGAIN, or an ICMP error of an earlier send to a rank that is gone
    }
    if (!liveness::tagValid(buf, static_cast<size_t>(n), opt_.tagKey)) {
      if (forged_.fetch_add(1) == 0) {
        SockAddr a;
        std::memcpy(&a.ss, &src, sizeof(src));
        a.len = srclen;
        MYR_LOG(kWarn, kNet, opt_.rank,
                "liveness: dropped a datagram from " + a.toString() +
                    " whose HMAC tag fails (another secret, an older Myriad build, or forged); later ones are "
                    "counted, not logged");
      }
      continue;
    }
    auto d = liveness::decode(buf, static_cast<size_t>(n) - liveness::kTagBytes, opt_.commKey, opt_.nranks);
    if (!d.isOk()) continue;
    const PeerInfo& from = (*opt_.peers)[static_cast<size_t>(d.value().from)];
    if (d.value().from == opt_.rank || !sameAddress(src, srclen, from.livenessAddr)) continue;
    handle(d.value(), now);
  }
}

void Liveness::handle(const Datagram& d, Clock::time_point now) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    Known& k = known_[d.from];
    k.state = d.state;
    k.heard = now;
  }
  auto heard = [&](int r) {
    auto it = std::lower_bound(neighbours_.begin(), neighbours_.end(), r);
    if (it != neighbours_.end() && *it == r) lastHeard_[static_cast<size_t>(it - neighbours_.begin())] = now;
  };
  heard(d.from);
  for (const Fate& f : d.fates) learn(f);
  // Queries and probes come once per path of the sender: answered once.
  const bool ask = d.kind == Kind::kQuery || d.kind == Kind::kProbe;
  if (ask) {
    auto& last = answered_[(static_cast<int64_t>(d.kind == Kind::kProbe ? d.about + 1 : 0) << 32) | d.from];
    if (now - last < std::chrono::milliseconds(50)) return;
    last = now;
  }
  if (d.kind == Kind::kQuery) sendTo(d.from, Kind::kState);
  // Indirect probes: a rank that lost its own path to `about` asks this one, whose datagrams take other
  // paths (other 5-tuples: other ECMP hashes); any datagram from `about` is then vouched for to it.
  if (d.kind == Kind::kProbe && d.about >= 0 && d.about != opt_.rank) {
    auto& waiting = probesFor_[d.about];
    if (std::find(waiting.begin(), waiting.end(), d.from) == waiting.end()) waiting.push_back(d.from);
    sendTo(d.about, Kind::kQuery);
  }
  if (d.kind == Kind::kVouch && d.about >= 0) heard(d.about);
  auto asked = probesFor_.find(d.from);
  if (asked != probesFor_.end()) {
    for (int r : asked->second) sendTo(r, Kind::kVouch, d.from);
    probesFor_.erase(asked);
  }
  if (d.kind == Kind::kBye) {
    const PeerInfo& p = (*opt_.peers)[static_cast<size_t>(d.from)];
    std::string after = d.state.seq == 0 ? "before any call"
                                         : "after its call #" + std::to_string(d.state.seq) + " (" + d.state.op + ")";
    learn(Fate{d.from, FateKind::kLeft, p.describe() + " left the communicator (destroyed it, or exited) " + after});
  }
}

void Liveness::learn(const Fate& f) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (fates_.count(f.rank)) return;
    fates_.emplace(f.rank, f);
    fateOrder_.push_back(f.rank);
  }
  if (opt_.onFate) opt_.onFate(f);
  // Flooded at once: the datagram to every neighbour puts the newest fate first.
  for (int r : neighbours_)
    if (r != f.rank && !fateOf(r)) sendTo(r, Kind::kHeartbeat);
}

void Liveness::sendTo(int peer, Kind kind, int about) {
  Datagram d;
  d.kind = kind;
  d.about = about;
  d.commKey = opt_.commKey;
  d.from = opt_.rank;
  {
    std::lock_guard<std::mutex> lock(mu_);
    d.state = kind == Kind::kState ? opt_.self() : lastSelf_;
    // The newest fate first, then the others in turn.
    const size_t n = fateOrder_.size();
    if (n > 0) {
      d.fates.push_back(fates_.at(fateOrder_[n - 1]));
      for (size_t i = 0; i + 1 < n && d.fates.size() < liveness::kMaxFates; ++i) {
        fateTurn_ = (fateTurn_ + 1) % (n - 1);
        d.fates.push_back(fates_.at(fateOrder_[fateTurn_]));
      }
    }
  }
  Bytes b = liveness::encode(d);
  liveness::seal(&b, opt_.tagKey);
  const SockAddr& to = (*opt_.peers)[static_cast<size_t>(peer)].livenessAddr;
  for (int fd : senders_)
    (void)sendto(fd, b.data(), b.size(), MSG_DONTWAIT | MSG_NOSIGNAL, reinterpret_cast<const sockaddr*>(&to.ss),
                 to.len);
}

void Liveness::checkNeighbours(Clock::time_point now) {
  auto silentMs = [&](size_t i) {
    return std::chrono::duration_cast<std::chrono::milliseconds>(now - lastHeard_[i]).count();
  };
  // Every neighbour silent at once is more likely this rank cut off than all of them gone.
  bool allSilent = neighbours_.size() >= 2;
  for (size_t i = 0; i < neighbours_.size() && allSilent; ++i) allSilent = silentMs(i) > opt_.deadMs;
  for (size_t i = 0; i < neighbours_.size(); ++i) {
    const int r = neighbours_[i];
    if (fateOf(r)) continue;
    // Silent for half the bound: maybe only the path between us failed (a link, an ECMP hash). Up to three
    // other neighbours probe it; a vouch counts as hearing it.
    if (2 * silentMs(i) > opt_.deadMs && probed_[i] <= lastHeard_[i]) {
      probed_[i] = now;
      int asked = 0;
      for (int other : neighbours_)
        if (other != r && asked < 3 && !fateOf(other)) sendTo(other, Kind::kProbe, r), ++asked;
    }
    if (silentMs(i) <= opt_.deadMs) continue;
    std::string text = describeSilence(r, silentMs(i));
    if (allSilent) text += "; every rank this one watches went silent at once: this rank is probably the one cut off";
    learn(Fate{r, FateKind::kDead, text});
  }
}

void Liveness::checkProcesses() {
  // Where the kernel gave no pidfd, /proc says whether the process still runs.
  for (const Local& l : locals_) {
    if (l.pidfd >= 0 || fateOf(l.rank)) continue;
    const PeerInfo& p = (*opt_.peers)[static_cast<size_t>(l.rank)];
    if (processState(p.pid) == ProcessState::kGone)
      learn(Fate{p.rank, FateKind::kDead, p.describe() + " exited (seen by rank " + std::to_string(opt_.rank) + ")"});
  }
}

std::string Liveness::describeSilence(int peer, int64_t silentMs) const {
  const PeerInfo& p = (*opt_.peers)[static_cast<size_t>(peer)];
  const std::string seen = " (seen by rank " + std::to_string(opt_.rank) + ")";
  const bool local = std::any_of(locals_.begin(), locals_.end(), [peer](const Local& l) { return l.rank == peer; });
  if (local) {
    switch (processState(p.pid)) {
      case ProcessState::kStopped:
        return p.describe() + " is stopped (SIGSTOP, or a debugger) and unresponsive: no heartbeat for " +
               secondsText(silentMs) + seen;
      case ProcessState::kGone: return p.describe() + " exited" + seen;
      case ProcessState::kRunning: break;
    }
  }
  return p.describe() + " is unresponsive: it stopped answering heartbeats " + secondsText(silentMs) + " ago" + seen;
}

Liveness::View Liveness::view(int peer, int maxAgeMs) {
  View v;
  const auto now = Clock::now();
  bool ask = false;
  {
    std::lock_guard<std::mutex> lock(mu_);
    Known& k = known_[peer];
    if (k.heard != Clock::time_point{}) {
      v.known = true;
      v.state = k.state;
      v.ageMs = std::chrono::duration_cast<std::chrono::milliseconds>(now - k.heard).count();
    }
    const auto maxAge = std::chrono::milliseconds(maxAgeMs);
    if ((!v.known || now - k.heard > maxAge) && now - k.asked > maxAge) {
      k.asked = now;
      wanted_.push_back(peer);
      ask = true;
    }
  }
  uint64_t one = 1;
  if (ask) (void)!write(wakeFd_, &one, sizeof(one));
  return v;
}

std::optional<Fate> Liveness::fateOf(int peer) const {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = fates_.find(peer);
  if (it == fates_.end()) return std::nullopt;
  return it->second;
}

}  // namespace myriad
