#include "transports/rdma/rdma_end.h"

#include "base/wire.h"

namespace myriad {
namespace {
constexpr uint32_t kEndMagic = 0x4d51594d;  // "MYQM"
}  // namespace

Bytes encodeRdmaEnd(const RdmaConnection::End& e) {
  Writer w;
  w.u32(kEndMagic);
  w.str(e.device);
  w.u32(e.port);
  w.u32(e.gidIndex);
  w.raw(e.gid, 16);
  w.u32(e.lid);
  w.u32(e.mtu);
  w.u64(e.maxMsg);
  w.u32(static_cast<uint32_t>(e.qps.size()));
  for (const auto& q : e.qps) {
    w.u32(q.qpn);
    w.u32(q.psn);
    w.u32(q.port);
  }
  return std::move(w.bytes());
}

bool decodeRdmaEnd(const Bytes& b, RdmaConnection::End* e) {
  Reader r(b);
  if (r.u32() != kEndMagic) return false;
  e->device = r.str(256);
  e->port = r.u32();
  e->gidIndex = r.u32();
  r.raw(e->gid, 16);
  e->lid = r.u32();
  e->mtu = r.u32();
  e->maxMsg = r.u64();
  uint32_t n = r.u32();
  if (r.failed() || n == 0 || n > 128) return false;
  e->qps.resize(n);
  for (auto& q : e->qps) {
    q.qpn = r.u32();
    q.psn = r.u32();
    q.port = r.u32();
  }
  return !r.failed();
}

}  // namespace myriad
