// The cuda_ipc transport's hello (transports/cuda_ipc/ipc_hello.h) decoded from arbitrary bytes, as a local
// process may send them on the pair's socket. What decodes is from the expected rank, describes an inbox
// within the limits, and encodes back to the bytes it came from.
#include "fuzz_check.h"
#include "transports/cuda_ipc/ipc_hello.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  myriad::fuzz::Input in(data, size);
  const int peer = in.u8() % 4;
  myriad::Bytes fixed(in.data(), in.data() + std::min(in.size(), myriad::ipc::kHelloBytes));
  auto h = myriad::ipc::decodeHello(fixed, peer, "rank " + std::to_string(peer));
  if (!h.isOk()) {
    FUZZ_CHECK(h.status().message().find("rank " + std::to_string(peer)) != std::string::npos,
               "a refusal names the peer");
    return 0;
  }
  FUZZ_CHECK(fixed.size() == myriad::ipc::kHelloBytes, "a short hello is refused");
  const myriad::ipc::Hello& hello = h.value();
  FUZZ_CHECK(hello.rank == peer, "the hello is from the expected rank");
  FUZZ_CHECK(hello.blob.size() <= 256, "the blob is bounded");
  FUZZ_CHECK(hello.bytes == hello.layout.bytes(), "the inbox size is its layout's");
  myriad::Bytes back = myriad::ipc::encodeHello(hello);
  back.resize(myriad::ipc::kHelloBytes);
  FUZZ_CHECK(back == fixed, "the round trip is exact");
  return 0;
}
