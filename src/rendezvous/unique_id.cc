// Encoding, decoding and validation of the 128-byte unique id.
#include "rendezvous/unique_id.h"

#include <sys/random.h>

#include <cstring>
#include <random>

namespace myriad {
namespace {
constexpr char kMagic[4] = {'M', 'Y', 'R', '1'};
constexpr uint8_t kVersion = 1;
constexpr size_t kFlagsOffset = 6;
constexpr uint8_t kFlagRootAtInit = 1;
constexpr size_t kAddrOffset = 24;
constexpr size_t kMaxFileDir = MYR_UNIQUE_ID_BYTES - kAddrOffset - 1;
}  // namespace

Secret randomSecret() {
  Secret s{};
  size_t got = 0;
  while (got < s.size()) {
    ssize_t n = getrandom(s.data() + got, s.size() - got, 0);
    if (n > 0)
      got += static_cast<size_t>(n);
    else if (errno != EINTR)
      break;
  }
  if (got < s.size()) {  // no getrandom: fall back to the C++ random device
    std::random_device rd;
    for (auto& b : s) b = static_cast<uint8_t>(rd());
  }
  return s;
}

bool secretEquals(const Secret& a, const Secret& b) {
  uint8_t diff = 0;
  for (size_t i = 0; i < a.size(); ++i) diff |= a[i] ^ b[i];
  return diff == 0;
}

myrUniqueId UniqueId::encode() const {
  myrUniqueId id;
  std::memset(&id, 0, sizeof(id));
  char* p = id.internal;
  std::memcpy(p, kMagic, 4);
  p[4] = static_cast<char>(kVersion);
  p[5] = static_cast<char>(kind);
  p[kFlagsOffset] = static_cast<char>(rootAtInit ? kFlagRootAtInit : 0);
  std::memcpy(p + 8, secret.data(), secret.size());
  if (kind == IdKind::kTcp) {
    uint16_t fam = static_cast<uint16_t>(tcpRoot.family());
    std::memcpy(p + kAddrOffset, &fam, 2);
    std::memcpy(p + kAddrOffset + 2, &tcpRoot.ss, tcpRoot.len);
  } else {
    std::memcpy(p + kAddrOffset, fileDir.data(), std::min(fileDir.size(), kMaxFileDir));
  }
  return id;
}

Result<UniqueId> UniqueId::decode(const myrUniqueId& id) {
  const char* p = id.internal;
  if (std::memcmp(p, kMagic, 4) != 0)
    return invalidArgument("not a Myriad unique id (bad magic; was it produced by myrGetUniqueId?)");
  if (static_cast<uint8_t>(p[4]) != kVersion)
    return invalidArgument("unique id of version " + std::to_string(static_cast<uint8_t>(p[4])) +
                           ", this library reads version " + std::to_string(kVersion));
  UniqueId u;
  u.kind = static_cast<IdKind>(p[5]);
  const uint8_t flags = static_cast<uint8_t>(p[kFlagsOffset]);
  if ((flags & ~kFlagRootAtInit) != 0)
    return invalidArgument("unique id has unknown flags " + std::to_string(flags) + " (made by a newer Myriad?)");
  u.rootAtInit = (flags & kFlagRootAtInit) != 0;
  if (u.rootAtInit && u.kind != IdKind::kTcp)
    return invalidArgument("unique id asks for a root at init, but is not tcp");
  std::memcpy(u.secret.data(), p + 8, u.secret.size());
  if (u.kind == IdKind::kTcp) {
    uint16_t fam = 0;
    std::memcpy(&fam, p + kAddrOffset, 2);
    size_t len = fam == AF_INET ? sizeof(sockaddr_in) : fam == AF_INET6 ? sizeof(sockaddr_in6) : 0;
    if (len == 0) return invalidArgument("unique id holds an unknown address family " + std::to_string(fam));
    std::memcpy(&u.tcpRoot.ss, p + kAddrOffset + 2, len);
    u.tcpRoot.len = static_cast<socklen_t>(len);
    if (u.tcpRoot.family() != fam || u.tcpRoot.port() == 0) return invalidArgument("unique id holds a bad address");
    return u;
  }
  if (u.kind == IdKind::kFile) {
    const char* dir = p + kAddrOffset;
    size_t len = strnlen(dir, kMaxFileDir + 1);
    if (len == 0 || len > kMaxFileDir) return invalidArgument("unique id holds a bad file-store directory");
    u.fileDir.assign(dir, len);
    return u;
  }
  return invalidArgument("unique id of unknown kind " + std::to_string(static_cast<int>(u.kind)));
}

std::string UniqueId::tag() const {
  static const char* hex = "0123456789abcdef";
  std::string t;
  for (size_t i = 0; i < 8; ++i) {
    t += hex[secret[i] >> 4];
    t += hex[secret[i] & 15];
  }
  return t;
}

}  // namespace myriad
