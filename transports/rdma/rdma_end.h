// What one end of an rdma connection publishes for the other through the store: its device, port, GID, MTU
// and QPs. The other side decodes it as hostile bytes (a bounded Reader, counts capped); what fails to decode
// is refused, never half-used.
#pragma once

#include "base/clock.h"
#include "transports/rdma/rdma_transport.h"

namespace myriad {

Bytes encodeRdmaEnd(const RdmaConnection::End& e);
// False when `b` is not a whole, well-formed description (then *e is unspecified).
bool decodeRdmaEnd(const Bytes& b, RdmaConnection::End* e);

}  // namespace myriad
