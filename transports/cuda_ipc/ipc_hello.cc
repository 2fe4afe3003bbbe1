#include "transports/cuda_ipc/ipc_hello.h"

#include "base/wire.h"

namespace myriad::ipc {
namespace {

constexpr uint32_t kMagic = 0x4d594456;  // "MYDV"
constexpr uint32_t kVersion = 2;
constexpr size_t kMaxBlob = 256;
// The most an allocation may exceed the inbox it holds (a device's allocation granularity: 2 MiB on NVIDIA GPUs).
constexpr uint64_t kMaxRounding = uint64_t{1} << 30;

}  // namespace

Bytes encodeHello(const Hello& h) {
  Writer w;
  w.u32(kMagic);
  w.u32(kVersion);
  w.i32(h.rank);
  w.i32(h.pid);
  w.u32(h.layout.slots);
  w.u64(h.layout.slotBytes);
  w.u64(h.bytes);
  w.u64(h.mapBytes);
  w.u64(h.base);
  w.u32(static_cast<uint32_t>(h.blob.size()));
  Bytes out = w.bytes();
  out.insert(out.end(), h.blob.begin(), h.blob.end());
  return out;
}

Result<Hello> decodeHello(const Bytes& bytes, int peer, const std::string& who) {
  Reader r(bytes);
  Hello h;
  uint32_t magic = r.u32(), version = r.u32();
  h.rank = r.i32();
  h.pid = r.i32();
  h.layout.slots = r.u32();
  h.layout.slotBytes = r.u64();
  h.bytes = r.u64();
  h.mapBytes = r.u64();
  h.base = r.u64();
  uint32_t blob = r.u32();
  if (r.failed() || magic != kMagic || version != kVersion)
    return invalidUsage("device memory exchange with " + who + ": not a Myriad hello (version mismatch?)");
  if (h.rank != peer)
    return invalidUsage("device memory exchange with " + who + ": it says it is rank " + std::to_string(h.rank));
  if (h.layout.slots < 1 || h.layout.slots > 1024 || h.layout.slotBytes < 256 || h.layout.slotBytes % 256 != 0 ||
      h.layout.slotBytes > (uint64_t{1} << 30) || h.bytes != h.layout.bytes() || blob > kMaxBlob ||
      (h.mapBytes != 0 && (h.mapBytes < h.bytes || h.mapBytes - h.bytes > kMaxRounding)))
    return invalidUsage("device memory exchange with " + who + ": malformed inbox description");
  h.blob.resize(blob);
  return h;
}

}  // namespace myriad::ipc
