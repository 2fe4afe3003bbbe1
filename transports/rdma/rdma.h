// The rdma transport as the communicator sees it: a factory, so that core code needs no verbs header.
// Built from rdma_transport.cc where rdma-core's headers were found, else from rdma_stub.cc (which always
// answers NotSupported, saying the library was built without them).
#pragma once

#include <memory>

#include "core/transport.h"
#include "rendezvous/peer_info.h"

namespace myriad {

// Opens this rank's RDMA device (self->rdmaDevice receives "name:port"); NotSupported with the reason when
// none works, InvalidArgument for a malformed MYRIAD_IB_* value.
Result<std::unique_ptr<Transport>> createRdmaTransport(const TransportContext& ctx, PeerInfo* self);

}  // namespace myriad
