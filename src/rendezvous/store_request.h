// One request of the rendezvous store's wire protocol, parsed from bytes a client sent after its hello
// (rendezvous/tcp_store.h): op u8 | key length u32 | key | then by op: set, value length u64 | value;
// wait-all, key count u32 | that many (key length u32 | key). Ops: 1 set, 2 get-wait, 3 try-get, 4 wait-all
// (the key after the op is its stop key, of length 0 for none). The bytes are hostile until proved
// otherwise: the parser never reads past them, takes nothing on trust, and says either that it needs more,
// or what the request is, or why it is no request.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace myriad::storeproto {

constexpr uint8_t kSet = 1, kGetWait = 2, kTryGet = 3, kWaitAll = 4;
constexpr uint32_t kMaxWaitKeys = 64;  // keys in one wait-all (a bootstrap asks for ceil(log2 n) <= 31)

struct Request {
  enum class Parse { kNeedMore, kOk, kBad };
  Parse parse = Parse::kNeedMore;
  uint8_t op = 0;
  std::string key;                 // wait-all: the stop key, empty for none
  std::vector<std::string> keys;   // wait-all: the keys waited for
  const uint8_t* value = nullptr;  // set: into the parsed bytes
  size_t valueBytes = 0;
  size_t used = 0;  // kOk: the request's length in bytes
  std::string why;  // kBad: for the log, which drops the client
};

// The request at the start of p[0, n).
Request parseRequest(const uint8_t* p, size_t n);

}  // namespace myriad::storeproto
