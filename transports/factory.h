// The transports a communicator gets, in order of preference: shm for ranks of this host, then rdma where a
// device works (MYRIAD_NET), then tcp, which reaches everyone. The communicator receives this as its
// TransportFactory, so a new transport is added here and nowhere in the core layer.
#pragma once

#include <memory>
#include <vector>

#include "core/transport.h"

namespace myriad {

Result<std::vector<std::unique_ptr<Transport>>> openTransports(const TransportContext& ctx, PeerInfo* self);

}  // namespace myriad
