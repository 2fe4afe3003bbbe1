#include "rendezvous/store_request.h"

#include <cstring>

#include "rendezvous/store.h"

namespace myriad::storeproto {
namespace {

// A key at p[*at, n): false with r untouched when the bytes end first; a bad length or key makes r kBad.
bool readKey(const uint8_t* p, size_t n, size_t* at, bool mayBeEmpty, std::string* key, Request* r) {
  if (n - *at < 4) return false;
  uint32_t len;
  std::memcpy(&len, p + *at, 4);
  if ((len == 0 && !mayBeEmpty) || len > kMaxStoreKey) {
    r->parse = Request::Parse::kBad;
    r->why = "bad key length " + std::to_string(len);
    return false;
  }
  if (n - *at - 4 < len) return false;
  key->assign(reinterpret_cast<const char*>(p + *at + 4), len);
  if (len > 0 && !checkStoreKey(*key).isOk()) {
    r->parse = Request::Parse::kBad;
    r->why = "bad key";
    return false;
  }
  *at += 4 + len;
  return true;
}

}  // namespace

Request parseRequest(const uint8_t* p, size_t n) {
  Request r;
  auto bad = [&r](std::string why) {
    r.parse = Request::Parse::kBad;
    r.why = std::move(why);
    return r;
  };
  if (n < 1) return r;
  r.op = p[0];
  if (r.op < kSet || r.op > kWaitAll) return bad("unknown request " + std::to_string(r.op));
  size_t need = 1;
  if (!readKey(p, n, &need, r.op == kWaitAll, &r.key, &r)) return r;
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
  } else if (r.op == kWaitAll) {
    if (n - need < 4) return r;
    uint32_t count;
    std::memcpy(&count, p + need, 4);
    if (count == 0 || count > kMaxWaitKeys) return bad("wait-all of " + std::to_string(count) + " keys");
    need += 4;
    r.keys.resize(count);
    for (std::string& key : r.keys)
      if (!readKey(p, n, &need, false, &key, &r)) return r;
  }
  r.used = need;
  r.parse = Request::Parse::kOk;
  return r;
}

}  // namespace myriad::storeproto
