// The liveness channel's datagram decoder (core/liveness_wire.h) on arbitrary bytes, as its UDP socket may
// receive them from anyone. What decodes respects the limits and encodes back to bytes that decode alike;
// the tag check refuses what the key did not seal.
#include "core/liveness_wire.h"
#include "fuzz_check.h"

using namespace myriad::liveness;

namespace {

constexpr uint64_t kComm = 0x6d7972696164ULL;

bool same(const Datagram& a, const Datagram& b) {
  if (a.kind != b.kind || a.commKey != b.commKey || a.from != b.from || a.about != b.about) return false;
  const SelfState &x = a.state, &y = b.state;
  if (x.seq != y.seq || x.inCall != y.inCall || x.op != y.op || x.count != y.count || x.dtype != y.dtype ||
      x.sinceMs != y.sinceMs || x.waitsOn != y.waitsOn || x.quietMs != y.quietMs)
    return false;
  if (a.fates.size() != b.fates.size()) return false;
  for (size_t i = 0; i < a.fates.size(); ++i)
    if (a.fates[i].rank != b.fates[i].rank || a.fates[i].kind != b.fates[i].kind || a.fates[i].text != b.fates[i].text)
      return false;
  return true;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  myriad::fuzz::Input in(data, size);
  const int nranks = 1 + in.u8() * 37;
  auto d = decode(in.data(), in.size(), kComm, nranks);
  myriad::auth::Key key{};
  key[0] = 1;
  FUZZ_CHECK(in.size() < kTagBytes || !tagValid(in.data(), in.size(), key) || in.size() > kMaxDatagram,
             "unsealed bytes pass the tag check");
  if (!d.isOk()) return 0;
  const Datagram& g = d.value();
  FUZZ_CHECK(g.commKey == kComm, "another communicator's datagram is refused");
  FUZZ_CHECK(g.from >= 0 && g.from < nranks, "the sender is a rank");
  FUZZ_CHECK(g.fates.size() <= kMaxFates, "fates are bounded");
  for (const Fate& f : g.fates) {
    FUZZ_CHECK(f.rank >= 0 && f.rank < nranks, "a fate names a rank");
    FUZZ_CHECK(f.text.size() <= kMaxFateText, "a fate's text is bounded");
  }
  myriad::Bytes bytes = encode(g);
  auto again = decode(bytes.data(), bytes.size(), kComm, nranks);
  FUZZ_CHECK(again.isOk() && same(g, again.value()), "a decoded datagram encodes back to itself");
  seal(&bytes, key);
  FUZZ_CHECK(tagValid(bytes.data(), bytes.size(), key), "a sealed datagram passes the tag check");
  bytes[bytes.size() / 2] ^= 1;
  FUZZ_CHECK(!tagValid(bytes.data(), bytes.size(), key), "a changed datagram fails the tag check");
  return 0;
}
