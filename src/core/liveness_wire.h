// The liveness channel's datagrams (core/liveness.cc): heartbeats to the ranks that watch this one, queries
// and the state answered to them, and the fates of ranks (dead, or left) that every datagram repeats so
// that a death heard by one rank reaches all. One UDP datagram each, well under one MTU. Decoding takes
// hostile bytes: anything malformed, oversized, from another communicator or naming a rank out of range is
// refused, never trusted. On the wire each datagram is sealed: followed by a 16-byte HMAC-SHA256 tag under
// a key derived from the communicator's secret and tag; a datagram whose tag fails is dropped unread.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "base/auth.h"
#include "base/clock.h"
#include "base/status.h"

namespace myriad::liveness {

enum class Kind : uint8_t {
  kHeartbeat = 1,  // "I am alive", to the ranks that watch the sender
  kQuery = 2,      // "what are you doing?", from a rank that waits on the receiver
  kState = 3,      // the answer to a query
  kBye = 4,        // the sender leaves: its communicator is destroyed or its process exits
  kProbe = 5,      // "I have not heard from `about`: ask it for me" (its path to me may be what failed)
  kVouch = 6,      // "`about` answered me"
};

// What a rank says of itself: its place in the sequence of calls on the communicator and whom it waits on.
struct SelfState {
  uint64_t seq = 0;      // the last call entered (0: none yet)
  bool inCall = false;   // inside call `seq` now
  std::string op;        // "all_reduce", ...: the last call's operation
  uint64_t count = 0;    // elements
  std::string dtype;     // "float32", ...
  uint32_t sinceMs = 0;  // since call `seq` was entered (inCall) or finished (not inCall)
  int32_t waitsOn = -1;  // the rank whose silence this rank is stalled on; -1: none
  uint32_t quietMs = 0;  // how long this rank's call has moved no data (0 unless waitsOn >= 0)
};

// kFailed: the rank's communicator failed (a stuck call, a lost connection) and the reason travels to all,
// without the rendezvous store.
enum class FateKind : uint8_t { kDead = 1, kLeft = 2, kFailed = 3 };

// A rank that is gone, as the rank that noticed it says it: "rank 2 (node-a pid 6380) exited (pidfd)".
struct Fate {
  int32_t rank = -1;
  FateKind kind = FateKind::kDead;
  std::string text;
};

struct Datagram {
  Kind kind = Kind::kHeartbeat;
  uint64_t commKey = 0;  // which communicator (core/liveness.cc derives it from the secret and the tag)
  int32_t from = -1;
  int32_t about = -1;       // probe, vouch: the rank concerned
  SelfState state;          // heartbeat, state, bye
  std::vector<Fate> fates;  // every kind: the fates the sender knows, at most kMaxFates
};

constexpr size_t kMaxFates = 4;
constexpr size_t kMaxFateText = 240;
constexpr size_t kMaxDatagram = 1400;

// The bytes of `d`; fates beyond kMaxFates and text beyond kMaxFateText are cut.
Bytes encode(const Datagram& d);
// A datagram of communicator `commKey` with `nranks` ranks, or why these bytes are not one.
Result<Datagram> decode(const uint8_t* p, size_t n, uint64_t commKey, int nranks);

// The tag: HMAC-SHA256 under `key` over the encoded datagram, truncated to kTagBytes, appended by seal().
constexpr size_t kTagBytes = 16;
void seal(Bytes* bytes, const auth::Key& key);
// Whether p[0..n) ends with the tag of the bytes before it (constant-time compare).
bool tagValid(const uint8_t* p, size_t n, const auth::Key& key);

}  // namespace myriad::liveness
