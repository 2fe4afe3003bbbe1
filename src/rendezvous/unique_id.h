// The unique id: 128 opaque bytes naming one communicator's rendezvous (where) and its secret (who may
// join). Layout: "MYR1" | version u8 | kind u8 | flags u8 | 1 reserved | secret[16] | kind-specific
// address. Ids without flags (all that myrGetUniqueId made before MYRIAD_COMM_ID) decode as before.
#pragma once

#include <array>
#include <cstdint>
#include <string>

#include "base/socket.h"
#include "base/status.h"
#include "myriad/myriad.h"

namespace myriad {

using Secret = std::array<uint8_t, 16>;

enum class IdKind : uint8_t { kTcp = 1, kFile = 2 };

struct UniqueId {
  IdKind kind = IdKind::kTcp;
  Secret secret{};
  SockAddr tcpRoot;     // kTcp
  std::string fileDir;  // kFile: a directory shared by the ranks (at most 100 bytes)
  // kTcp: nobody listens yet; rank 0 starts the root on tcpRoot in myrCommInitRank (MYRIAD_COMM_ID).
  bool rootAtInit = false;

  myrUniqueId encode() const;
  static Result<UniqueId> decode(const myrUniqueId& id);
  // 16 hex digits derived from the secret, for names of shared-memory segments and store keys.
  std::string tag() const;
};

Secret randomSecret();
// Constant-time comparison.
bool secretEquals(const Secret& a, const Secret& b);

}  // namespace myriad
