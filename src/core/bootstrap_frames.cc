// Bootstrap frames (see bootstrap_frames.h).
#include "core/bootstrap_frames.h"

#include <algorithm>
#include <cstring>
#include <string>

namespace myriad::bootframe {
// Frames are sized first and filled with memcpy: growing a vector piece by piece trips GCC 12's false
// -Wstringop-overflow here.
namespace {

uint8_t* put32(uint8_t* at, uint32_t v) {
  std::memcpy(at, &v, 4);
  return at + 4;
}

uint8_t* putBytes(uint8_t* at, const uint8_t* p, size_t n) {
  if (n) std::memcpy(at, p, n);
  return at + n;
}

}  // namespace

Bytes encodeRound(const std::vector<const Bytes*>& descriptions) {
  size_t body = 0;
  for (const Bytes* d : descriptions) body += 4 + d->size();
  Bytes frame(4 + body);
  uint8_t* at = put32(frame.data(), static_cast<uint32_t>(body));
  for (const Bytes* d : descriptions) at = putBytes(put32(at, static_cast<uint32_t>(d->size())), d->data(), d->size());
  return frame;
}

uint64_t maxRoundBody(int count) {
  return static_cast<uint64_t>(count) * (4 + kMaxDescription);
}

Result<std::vector<Bytes>> decodeRound(const Bytes& body, int count) {
  if (count < 0 || body.size() > maxRoundBody(count))
    return Status(Code::kRemoteError, "a round frame of " + std::to_string(body.size()) + " bytes for " +
                                          std::to_string(count) + " descriptions");
  Reader rd(body);
  std::vector<Bytes> out;
  out.reserve(static_cast<size_t>(count));
  for (int i = 0; i < count; ++i) {
    const uint32_t len = rd.u32();
    if (rd.failed() || len >= kMaxDescription || len > rd.remaining())
      return Status(Code::kRemoteError,
                    "a malformed round frame (description " + std::to_string(i) + " of " + std::to_string(count) + ")");
    Bytes b(len);
    rd.raw(b.data(), len);
    out.push_back(std::move(b));
  }
  if (rd.failed()) return Status(Code::kRemoteError, "a short round frame");
  if (rd.remaining() != 0)
    return Status(Code::kRemoteError, "a round frame with " + std::to_string(rd.remaining()) + " bytes after its " +
                                          std::to_string(count) + " descriptions");
  return out;
}

Bytes encodeAbort(const Bytes& failure) {
  const size_t n = std::min<size_t>(failure.size(), kMaxDescription);
  Bytes frame(8 + n);
  putBytes(put32(put32(frame.data(), kAbortFrame), static_cast<uint32_t>(n)), failure.data(), n);
  return frame;
}

Bytes encodeFailure(const Status& s) {
  Bytes b(4 + s.message().size());
  const auto code = static_cast<uint32_t>(s.code());
  std::memcpy(b.data(), &code, 4);
  if (!s.message().empty()) std::memcpy(b.data() + 4, s.message().data(), s.message().size());
  if (b.size() > kMaxDescription) b.resize(kMaxDescription);
  return b;
}

Status decodeFailure(const uint8_t* p, size_t n) {
  if (n < 4) return Status(Code::kRemoteError, "bootstrap: a malformed failure notice");
  uint32_t code = 0;
  std::memcpy(&code, p, 4);
  Code c = Code::kRemoteError;
  for (Code k : {Code::kSystemError, Code::kInternalError, Code::kInvalidArgument, Code::kInvalidUsage,
                 Code::kRemoteError, Code::kTimeout})
    if (static_cast<uint32_t>(k) == code) c = k;
  return Status(c, std::string(reinterpret_cast<const char*>(p) + 4, n - 4));
}

}  // namespace myriad::bootframe
