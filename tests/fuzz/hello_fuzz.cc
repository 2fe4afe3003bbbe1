// The challenge-response hello that opens every store, tcp and tcp-lane connection (base/hello.h), driven
// over real socket pairs in three ways chosen by the input's first byte:
//   0: an accepter reads arbitrary bytes (a port scanner, a stranger, an old version);
//   1: an opener, its Open sent, reads arbitrary bytes as the Answer;
//   2: a real opener and a real accepter sharing the key talk through a relay that flips the bytes the
//      input names, and the accepter's Proof is followed on the socket by bytes that belong to the caller.
// Properties: arbitrary bytes never complete a hello; through the relay, an untouched hello completes on
// both sides, a side that completes saw every byte its peer's proof covers unchanged, the accepter learns
// the opener's ident, and the bytes after the hello are left on the socket, unread.
#include <sys/socket.h>
#include <unistd.h>

#include <vector>

#include "base/hello.h"
#include "fuzz_check.h"

using myriad::Handshake;
using myriad::HelloIdent;

namespace {

constexpr uint32_t kLegacyMagic = 0x5352594d;

struct Pair {
  int fd[2] = {-1, -1};
  Pair() { FUZZ_CHECK(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fd) == 0, "socketpair"); }
  ~Pair() {
    close(fd[0]);
    close(fd[1]);
  }
};

myriad::auth::Key testKey() {
  myriad::auth::Key k{};
  for (size_t i = 0; i < k.size(); ++i) k[i] = static_cast<uint8_t>(i * 7 + 1);
  return k;
}

std::vector<uint8_t> drain(int fd) {
  std::vector<uint8_t> out;
  uint8_t buf[512];
  ssize_t n;
  while ((n = recv(fd, buf, sizeof(buf), MSG_DONTWAIT)) > 0) out.insert(out.end(), buf, buf + n);
  return out;
}

void sendAll(int fd, const uint8_t* p, size_t n) {
  FUZZ_CHECK(send(fd, p, n, MSG_NOSIGNAL) == static_cast<ssize_t>(n), "a small write fits the socket");
}

// One side against arbitrary bytes: it must never complete.
void strangerBytes(Handshake::Role role, myriad::fuzz::Input& in) {
  Pair p;
  Handshake side(role, testKey(), HelloIdent{1, 2, 3}, {kLegacyMagic});
  if (role == Handshake::Role::kOpener) (void)side.step(p.fd[0]);
  std::string junk = in.bytes(4096);
  if (!junk.empty()) sendAll(p.fd[1], reinterpret_cast<const uint8_t*>(junk.data()), junk.size());
  shutdown(p.fd[1], SHUT_WR);
  for (int i = 0; i < 4; ++i) {
    myriad::Status s = side.step(p.fd[0]);
    FUZZ_CHECK(!side.done(), "arbitrary bytes completed a hello");
    if (!s.isOk()) {
      FUZZ_CHECK(!s.message().empty(), "a refusal says why");
      return;
    }
  }
}

struct Flip {
  bool toAccepter;
  size_t at;
  uint8_t mask;
};

// Copies what is waiting on `from` to `to`, flipping the bytes of this direction's stream that `flips` name;
// the flips that landed go to `landed`.
void relay(int from, int to, size_t* streamPos, bool toAccepter, const std::vector<Flip>& flips,
           std::vector<Flip>* landed) {
  std::vector<uint8_t> b = drain(from);
  for (const Flip& f : flips)
    if (f.toAccepter == toAccepter && f.at >= *streamPos && f.at < *streamPos + b.size()) {
      b[f.at - *streamPos] ^= f.mask;
      landed->push_back(f);
    }
  *streamPos += b.size();
  if (!b.empty()) sendAll(to, b.data(), b.size());
}

// Whether every flip lies in the bytes [from, to) of one direction's stream.
bool allWithin(const std::vector<Flip>& flips, bool toAccepter, size_t from, size_t to) {
  for (const Flip& f : flips)
    if (f.toAccepter != toAccepter || f.at < from || f.at >= to) return false;
  return true;
}

void throughRelay(myriad::fuzz::Input& in) {
  HelloIdent ident{};
  for (auto& b : ident) b = in.u8();
  std::vector<Flip> flips;
  for (int n = in.u8() % 4; n > 0; --n) {
    uint8_t where = in.u8(), mask = in.u8();
    Flip f{(where & 0x80) != 0, static_cast<size_t>(where & 0x7f), mask};
    bool merged = false;  // two flips of one byte are one: their masks combined
    for (Flip& g : flips)
      if (g.toAccepter == f.toAccepter && g.at == f.at) g.mask ^= f.mask, merged = true;
    if (!merged) flips.push_back(f);
  }
  std::erase_if(flips, [](const Flip& f) { return f.mask == 0; });
  std::string after = in.bytes(64);
  Pair toOpener, toAccepter;  // opener <-> fd[0] ... fd[1] <-> relay; likewise for the accepter
  Handshake opener(Handshake::Role::kOpener, testKey(), ident);
  Handshake accepter(Handshake::Role::kAccepter, testKey(), HelloIdent{}, {kLegacyMagic});
  size_t posOA = 0, posAO = 0;
  std::vector<Flip> landed;
  bool openerFailed = false, accepterFailed = false, afterSent = false;
  for (int round = 0; round < 6; ++round) {
    if (!openerFailed && !opener.done()) openerFailed = !opener.step(toOpener.fd[0]).isOk();
    relay(toOpener.fd[1], toAccepter.fd[1], &posOA, true, flips, &landed);
    if (posOA >= 68 && !afterSent) {  // the caller's first bytes follow the Proof at once
      if (!after.empty()) sendAll(toAccepter.fd[1], reinterpret_cast<const uint8_t*>(after.data()), after.size());
      afterSent = true;
    }
    if (!accepterFailed && !accepter.done()) accepterFailed = !accepter.step(toAccepter.fd[0]).isOk();
    relay(toAccepter.fd[1], toOpener.fd[1], &posAO, false, flips, &landed);
  }
  if (landed.empty()) {
    FUZZ_CHECK(opener.done() && accepter.done(), "an untouched hello completes on both sides");
    FUZZ_CHECK(accepter.ident() == ident, "the accepter learns the opener's ident");
  }
  // Open = [0, 36) and Proof = [36, 68) towards the accepter; Answer = magic, version [0, 8), nonce [8, 24),
  // mac [24, 56) towards the opener. The opener's proof covers the Open and the Answer's nonce, and the
  // opener sends it even when the Answer's mac fails (so that a wrong secret is logged on both sides).
  if (accepter.done()) {
    FUZZ_CHECK(allWithin(landed, false, 24, 56), "the accepter completed a hello whose covered bytes were changed");
    std::vector<uint8_t> left = drain(toAccepter.fd[0]);
    FUZZ_CHECK(std::string(left.begin(), left.end()) == after, "the hello left the caller's bytes unread");
  }
  if (opener.done())
    FUZZ_CHECK(allWithin(landed, true, 36, 68), "the opener completed a hello whose Open or Answer was changed");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  myriad::fuzz::Input in(data, size);
  switch (in.u8() % 3) {
    case 0: strangerBytes(Handshake::Role::kAccepter, in); break;
    case 1: strangerBytes(Handshake::Role::kOpener, in); break;
    default: throughRelay(in); break;
  }
  return 0;
}
