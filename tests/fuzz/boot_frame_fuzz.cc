// The bootstrap exchange's frames (core/bootstrap_frames.h) from arbitrary bytes, as a member of the job
// could send them after its hello. First byte: the round's description count (1 + byte % 16); the rest is a
// round body, and on its own a failure notice. What decodes encodes back to the same bytes; every refusal
// is a status, never a crash or a read past the input.
#include <algorithm>

#include "core/bootstrap_frames.h"
#include "fuzz_check.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  namespace bf = myriad::bootframe;
  const int count = 1 + data[0] % 16;
  const myriad::Bytes body(data + 1, data + size);
  auto round = bf::decodeRound(body, count);
  if (round.isOk()) {
    FUZZ_CHECK(round.value().size() == static_cast<size_t>(count), "a round yields its count of descriptions");
    std::vector<const myriad::Bytes*> refs;
    for (const myriad::Bytes& d : round.value()) refs.push_back(&d);
    const myriad::Bytes frame = bf::encodeRound(refs);
    FUZZ_CHECK(frame.size() == body.size() + 4, "the frame is its length and the body");
    FUZZ_CHECK(std::equal(body.begin(), body.end(), frame.begin() + 4), "the round trip is exact");
  }
  const myriad::Status failure = bf::decodeFailure(body.data(), body.size());
  FUZZ_CHECK(!failure.isOk(), "a failure notice never reads as success");
  const myriad::Bytes again = bf::encodeFailure(failure);
  const myriad::Status twice = bf::decodeFailure(again.data(), again.size());
  FUZZ_CHECK(twice.code() == failure.code(), "a failure keeps its code");
  FUZZ_CHECK(again.size() == bf::kMaxDescription || twice.message() == failure.message(), "and its reason");
  const myriad::Bytes abort = bf::encodeAbort(body);
  FUZZ_CHECK(abort.size() <= 8 + bf::kMaxDescription, "an abort frame is bounded");
  return 0;
}
