// The mutual challenge-response that opens every Myriad socket (rendezvous store, tcp, tcp lanes): neither
// side sends the secret; each proves it with an HMAC over both nonces and the connection's identity, so a
// recorded hello is worthless on a new connection. Wire (little-endian, docs/security.md):
//   opener -> accepter  Open   = magic u32 | version u32 | nonceO[16] | ident[12]   (36 bytes)
//   accepter -> opener  Answer = magic u32 | version u32 | nonceA[16] | macA[32]    (56 bytes)
//   opener -> accepter  Proof  = macO[32]
//   macX = HMAC-SHA256(key, "myriad hello v2 " X | ident | nonceO | nonceA), X = "accepter" or "opener".
// A Handshake never reads past its own bytes: whatever follows on the socket belongs to the caller.
#pragma once

#include <array>
#include <atomic>
#include <string>
#include <vector>

#include "base/auth.h"
#include "base/clock.h"
#include "base/status.h"

namespace myriad {

constexpr uint32_t kHelloMagic = 0x4852594d;  // "MYRH"
constexpr uint32_t kHelloVersion = 2;
using HelloIdent = std::array<uint8_t, 12>;  // what the connection is: the caller's kind and ranks
// The error of a hello whose peer closed the connection before it was done (a server that dropped a client
// too slow to answer, or one that exited): the one failure worth a new connection (Handshake::peerClosed).
inline constexpr const char* kHelloClosed = "connection closed during the hello";

class Handshake {
 public:
  enum class Role { kOpener, kAccepter };
  // `legacyMagics`: the first word of version-1 hellos, refused by name. An opener sends `ident`; an
  // accepter learns it (ident()) from the Open and checks it itself once done().
  Handshake(Role role, const auth::Key& key, HelloIdent ident, std::vector<uint32_t> legacyMagics = {});

  // Non-blocking: moves as far as the socket allows. An error says why the peer was refused.
  Status step(int fd);
  // Blocking: steps until done, the deadline or the abort flag.
  Status run(int fd, Clock::time_point deadline, const std::atomic<bool>* abort);
  bool done() const { return state_ == State::kDone; }
  // The last error was the peer closing (or resetting) the connection before the hello was done, not a refusal.
  bool peerClosed() const { return peerClosed_; }
  const HelloIdent& ident() const { return ident_; }

  // For tests: the bytes this side has sent so far (to replay them on another connection).
  const std::vector<uint8_t>& sent() const { return sentLog_; }

 private:
  enum class State { kOpen, kAnswer, kProof, kDone };
  Status closed();  // the peer closed the connection: records it and says so
  Status flush(int fd);
  Status fill(int fd, size_t want, bool* complete);  // reads in_ up to `want` bytes
  Status checkHeader() const;
  auth::Mac mac(const char* who) const;

  Role role_;
  auth::Key key_;
  HelloIdent ident_;
  std::vector<uint32_t> legacy_;
  auth::Nonce mine_{}, nonceO_{}, nonceA_{};
  State state_ = State::kOpen;
  std::vector<uint8_t> out_;
  size_t outDone_ = 0;
  std::vector<uint8_t> in_;
  std::vector<uint8_t> sentLog_;
  bool peerClosed_ = false;
};

}  // namespace myriad
