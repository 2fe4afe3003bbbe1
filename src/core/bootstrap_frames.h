// The bytes of the bootstrap exchange (bootstrap_allgather.h), apart from its sockets so that tests and a
// fuzz target hold them to the wire. After the hello, each round's connection carries one frame:
//   round frame:  u32 body length | (u32 length | description) x count
//   abort frame:  u32 kAbortFrame | u32 length | failure
// and a failure (also the store's boot.abort) is u32 code | the reason. Lengths are little-endian as the
// ranks of one job write them (they share the library's build). The bodies come only from ranks that passed
// the authenticated hello, but a bug, a version mix or a hostile member must still end in a clear error,
// never in a crash or a half-read table.
#pragma once

#include <cstdint>
#include <vector>

#include "base/status.h"
#include "base/wire.h"

namespace myriad::bootframe {

constexpr uint32_t kAbortFrame = 0xffffffffu;
constexpr uint32_t kMaxDescription = 1u << 16;  // a description, and a failure notice, are shorter

// The round frame of `descriptions` (each shorter than kMaxDescription), its body length first.
Bytes encodeRound(const std::vector<const Bytes*>& descriptions);
// The largest body a round of `count` descriptions may announce: more is refused before it is read.
uint64_t maxRoundBody(int count);
// A round's body (what follows its length): exactly `count` descriptions, each shorter than
// kMaxDescription, and nothing after them.
Result<std::vector<Bytes>> decodeRound(const Bytes& body, int count);

// The abort frame of a failure (its wire form, encodeFailure, cut to kMaxDescription).
Bytes encodeAbort(const Bytes& failure);
Bytes encodeFailure(const Status& s);
// The failure as sent: its code when it is one a failure may carry (else kRemoteError), and its reason.
Status decodeFailure(const uint8_t* p, size_t n);

}  // namespace myriad::bootframe
