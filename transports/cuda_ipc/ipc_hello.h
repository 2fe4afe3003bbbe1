// The hello two ranks of one host exchange over a unix socket before either maps the other's device inbox:
// who it is, the inbox's layout and size, the exported allocation's size and the handle's blob (the file
// descriptor travels beside it). Decoding takes hostile bytes: a hello that is not exactly what `peer` must
// send is an error naming the peer, and nothing is mapped.
#pragma once

#include <string>

#include "base/clock.h"
#include "base/status.h"
#include "core/device_comm.h"

namespace myriad::ipc {

// magic, version, rank, pid, slots, slotBytes, bytes, mapBytes, base, blob length: the fixed part of a hello.
constexpr size_t kHelloBytes = 4 + 4 + 4 + 4 + 4 + 8 + 8 + 8 + 8 + 4;

struct Hello {
  int32_t rank = -1, pid = 0;
  ChannelLayout layout;
  uint64_t bytes = 0;     // the inbox's
  uint64_t mapBytes = 0;  // the exported allocation's (the inbox rounded up to the device's granularity)
  uint64_t base = 0;
  std::vector<uint8_t> blob;
};

Bytes encodeHello(const Hello& h);
// The fixed part of a hello from `peer` (described as `who` in errors); the blob's bytes follow it on the
// socket, and `blob` comes back sized to their count (at most 256).
Result<Hello> decodeHello(const Bytes& fixed, int peer, const std::string& who);

}  // namespace myriad::ipc
