// A rank's description (rendezvous/peer_info.h) decoded from arbitrary bytes, as the peer table arrives
// through the store. What decodes encodes back to the same bytes.
#include "base/wire.h"
#include "fuzz_check.h"
#include "rendezvous/peer_info.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  myriad::Reader r(data, size);
  auto p = myriad::PeerInfo::decode(r);
  if (!p.isOk()) return 0;
  myriad::Writer w;
  p.value().encode(w);
  myriad::Reader again(w.bytes());
  auto q = myriad::PeerInfo::decode(again);
  FUZZ_CHECK(q.isOk(), "an encoded description decodes");
  myriad::Writer w2;
  q.value().encode(w2);
  FUZZ_CHECK(w2.bytes() == w.bytes(), "the round trip is exact");
  (void)q.value().describe();
  return 0;
}
