// The check that a buffer freed and mapped again at the same address is not served by a stale registration:
// round 1 runs an all-reduce and a ring of send/recv on buffers inside one mapping; the mapping is unmapped
// and a new one (new pages, other contents) is mapped at the very same address; round 2 runs the same calls
// there, with other values. A transport that kept anything tied to the old pages (an RDMA memory
// registration pins them) moves round 2's bytes from or into the old pages, and round 2's check fails.
// Runs in a child; results are text, as in mp_helpers.h.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "myriad/myriad.h"

namespace myriad::test {

enum class FirstBuffer {
  kPlain,               // round 1 on an unregistered buffer
  kRegistered,          // registered before round 1, deregistered before the unmap
  kRegisteredAfterUse,  // round 1 unregistered, then registered and deregistered before the unmap
};
const char* firstBufferName(FirstBuffer how);

struct RemapOutcome {
  std::string error;   // "" when both rounds were right; else what went wrong first
  bool stale = false;  // round 1 was right and round 2 wrong: what a registration of the old pages does
};

// `count` int32 elements per buffer; every rank calls it with the same arguments.
RemapOutcome runRemapRounds(myrComm_t comm, int rank, int nranks, FirstBuffer how, size_t count, uint64_t salt);

}  // namespace myriad::test
