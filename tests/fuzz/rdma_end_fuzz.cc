// What an rdma connection's far end publishes (transports/rdma/rdma_end.h), decoded from arbitrary bytes.
// What decodes has a bounded number of QPs and encodes back to bytes that decode alike.
#include "fuzz_check.h"
#include "transports/rdma/rdma_end.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  myriad::Bytes b(data, data + size);
  myriad::RdmaConnection::End e;
  if (!myriad::decodeRdmaEnd(b, &e)) return 0;
  FUZZ_CHECK(!e.qps.empty() && e.qps.size() <= 128, "the QP count is bounded");
  FUZZ_CHECK(e.device.size() <= 256, "the device name is bounded");
  myriad::Bytes back = myriad::encodeRdmaEnd(e);
  FUZZ_CHECK(back.size() <= b.size() && std::equal(back.begin(), back.end(), b.begin()),
             "the description is the prefix it was read from");
  return 0;
}
