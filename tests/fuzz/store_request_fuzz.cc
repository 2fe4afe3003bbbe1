// The rendezvous store's request parser (rendezvous/store_request.h) on arbitrary bytes, as the server runs
// it on what a client sends after its hello: requests one after another until one is incomplete or bad.
// Properties: a parsed request lies within the bytes and within the protocol's limits; every proper prefix
// of a well-formed request asks for more rather than being refused or accepted.
#include "fuzz_check.h"
#include "rendezvous/store.h"
#include "rendezvous/store_request.h"

using myriad::storeproto::parseRequest;
using myriad::storeproto::Request;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  size_t off = 0;
  while (off < size) {
    Request r = parseRequest(data + off, size - off);
    if (r.parse != Request::Parse::kOk) {
      FUZZ_CHECK(r.parse == Request::Parse::kNeedMore || !r.why.empty(), "a refusal says why");
      break;
    }
    FUZZ_CHECK(r.used > 0 && r.used <= size - off, "a request lies within its bytes");
    const bool all = r.op == myriad::storeproto::kWaitAll;
    FUZZ_CHECK((all || !r.key.empty()) && r.key.size() <= myriad::kMaxStoreKey, "keys are bounded");
    FUZZ_CHECK(r.key.empty() || myriad::checkStoreKey(r.key).isOk(), "only valid keys are accepted");
    FUZZ_CHECK(all ? !r.keys.empty() && r.keys.size() <= myriad::storeproto::kMaxWaitKeys : r.keys.empty(),
               "only a wait-all names several keys, and at most kMaxWaitKeys");
    for (const std::string& k : r.keys) FUZZ_CHECK(myriad::checkStoreKey(k).isOk(), "only valid keys are waited for");
    FUZZ_CHECK(r.op == myriad::storeproto::kSet || r.valueBytes == 0, "only a set carries a value");
    if (r.valueBytes > 0)
      FUZZ_CHECK(r.value >= data + off && r.value + r.valueBytes <= data + off + r.used, "a value lies within");
    for (size_t cut : {size_t{0}, r.used / 2, r.used - 1}) {
      Request part = parseRequest(data + off, cut);
      FUZZ_CHECK(part.parse == Request::Parse::kNeedMore, "a prefix of a request asks for more");
    }
    off += r.used;
  }
  return 0;
}
