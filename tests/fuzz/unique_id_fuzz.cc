// The unique id decoder (rendezvous/unique_id.h) on arbitrary 128-byte ids: what a user passes to
// myrCommInitRank, possibly garbage. An id that decodes encodes back to one that decodes to the same thing.
#include <algorithm>

#include "fuzz_check.h"
#include "rendezvous/unique_id.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  myrUniqueId raw;
  std::memset(&raw, 0, sizeof(raw));
  std::memcpy(&raw, data, std::min(size, sizeof(raw)));
  auto id = myriad::UniqueId::decode(raw);
  if (!id.isOk()) {
    FUZZ_CHECK(!id.status().message().empty(), "a refusal says why");
    return 0;
  }
  auto again = myriad::UniqueId::decode(id.value().encode());
  FUZZ_CHECK(again.isOk(), "an encoded id decodes");
  const myriad::UniqueId& a = id.value();
  const myriad::UniqueId& b = again.value();
  FUZZ_CHECK(a.kind == b.kind && a.secret == b.secret && a.rootAtInit == b.rootAtInit, "the round trip is exact");
  FUZZ_CHECK(a.fileDir == b.fileDir && a.tcpRoot.toString() == b.tcpRoot.toString(), "the round trip is exact");
  return 0;
}
