#include "rendezvous/store_request.h"

#include <cstring>

#include "rendezvous/store.h"

namespace myriad::storeproto {

Request parseRequest(const uint8_t* p, size_t n) {
  Request r;
  auto bad = [&r](std::string why) {
    r.parse = Request::Parse::kBad;
    r.why = std::move(why);
    return r;
  };
  if (n < 1) return r;
  r.op = p[0];
  if (r.op < kSet || r.op > kTryGet) return bad("unknown request " + std::to_string(r.op));
  if (n < 5) return r;
  uint32_t keyLen;
  std::memcpy(&keyLen, p + 1, 4);
  if (keyLen == 0 || keyLen > kMaxStoreKey) return bad("bad key length " + std::to_string(keyLen));
  if (n - 5 < keyLen) return r;
  r.key.assign(reinterpret_cast<const char*>(p + 5), keyLen);
  if (!checkStoreKey(r.key).isOk()) return bad("bad key");
  size_t need = 5 + keyLen;
  if (r.op == kSet) {
    if (n - need < 8) return r;
    uint64_t len;
    std::memcpy(&len, p + need, 8);
    if (len > kMaxStoreValue) return bad("oversized value (" + std::to_string(len) + " bytes)");
    need += 8;
    if (n - need < len) return r;
    r.value = p + need;
    r.valueBytes = static_cast<size_t>(len);
    need += r.valueBytes;
  }
  r.used = need;
  r.parse = Request::Parse::kOk;
  return r;
}

}  // namespace myriad::storeproto
