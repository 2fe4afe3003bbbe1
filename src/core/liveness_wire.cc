// Encoding of the liveness channel's datagrams: magic, version, kind, communicator key, sender, its state,
// then the fates it knows. Little-endian as the rest of the wire (base/wire.h).
#include "core/liveness_wire.h"

#include "base/wire.h"

namespace myriad::liveness {
namespace {

constexpr uint32_t kMagic = 0x564c594d;  // "MYLV"
constexpr uint8_t kVersion = 2;          // 2: sealed with an HMAC tag
constexpr size_t kMaxName = 32;          // op and dtype names

std::string cut(const std::string& s, size_t n) {
  return s.size() <= n ? s : s.substr(0, n);
}

}  // namespace

Bytes encode(const Datagram& d) {
  Writer w;
  w.u32(kMagic);
  w.u8(kVersion);
  w.u8(static_cast<uint8_t>(d.kind));
  w.u64(d.commKey);
  w.i32(d.from);
  w.i32(d.about);
  const SelfState& s = d.state;
  w.u64(s.seq);
  w.u8(s.inCall ? 1 : 0);
  w.str(cut(s.op, kMaxName));
  w.u64(s.count);
  w.str(cut(s.dtype, kMaxName));
  w.u32(s.sinceMs);
  w.i32(s.waitsOn);
  w.u32(s.quietMs);
  const size_t fates = std::min(d.fates.size(), kMaxFates);
  w.u8(static_cast<uint8_t>(fates));
  for (size_t i = 0; i < fates; ++i) {
    w.i32(d.fates[i].rank);
    w.u8(static_cast<uint8_t>(d.fates[i].kind));
    w.str(cut(d.fates[i].text, kMaxFateText));
  }
  return w.bytes();
}

Result<Datagram> decode(const uint8_t* p, size_t n, uint64_t commKey, int nranks) {
  if (n > kMaxDatagram) return invalidArgument("liveness datagram of " + std::to_string(n) + " bytes is too long");
  Reader r(p, n);
  Datagram d;
  if (r.u32() != kMagic || r.failed()) return invalidArgument("not a liveness datagram (bad magic)");
  const uint8_t version = r.u8();
  if (version != kVersion) return invalidArgument("liveness datagram of version " + std::to_string(version));
  const uint8_t kind = r.u8();
  if (kind < 1 || kind > 6) return invalidArgument("liveness datagram of unknown kind " + std::to_string(kind));
  d.kind = static_cast<Kind>(kind);
  d.commKey = r.u64();
  if (!r.failed() && d.commKey != commKey) return invalidArgument("liveness datagram of another communicator");
  d.from = r.i32();
  d.about = r.i32();
  SelfState& s = d.state;
  s.seq = r.u64();
  s.inCall = r.u8() != 0;
  s.op = r.str(kMaxName);
  s.count = r.u64();
  s.dtype = r.str(kMaxName);
  s.sinceMs = r.u32();
  s.waitsOn = r.i32();
  s.quietMs = r.u32();
  const uint8_t fates = r.u8();
  if (fates > kMaxFates) return invalidArgument("liveness datagram with " + std::to_string(fates) + " fates");
  for (uint8_t i = 0; i < fates && !r.failed(); ++i) {
    Fate f;
    f.rank = r.i32();
    const uint8_t fk = r.u8();
    f.text = r.str(kMaxFateText);
    if (fk < 1 || fk > 3) return invalidArgument("liveness datagram with a fate of unknown kind");
    f.kind = static_cast<FateKind>(fk);
    if (f.rank < 0 || f.rank >= nranks) return invalidArgument("liveness datagram names a rank out of range");
    d.fates.push_back(std::move(f));
  }
  if (r.failed() || !r.atEnd()) return invalidArgument("malformed liveness datagram");
  if (d.from < 0 || d.from >= nranks) return invalidArgument("liveness datagram from a rank out of range");
  if (d.about < -1 || d.about >= nranks) return invalidArgument("liveness datagram about a rank out of range");
  if (s.waitsOn < -1 || s.waitsOn >= nranks) return invalidArgument("liveness datagram waits on a rank out of range");
  return d;
}

void seal(Bytes* bytes, const auth::Key& key) {
  const auth::Mac m = auth::hmac(key, {{bytes->data(), bytes->size()}});
  bytes->insert(bytes->end(), m.begin(), m.begin() + kTagBytes);
}

bool tagValid(const uint8_t* p, size_t n, const auth::Key& key) {
  if (n < kTagBytes) return false;
  const auth::Mac m = auth::hmac(key, {{p, n - kTagBytes}});
  return auth::equal(m.data(), p + n - kTagBytes, kTagBytes);
}

}  // namespace myriad::liveness
