// The rdma transport of a build without rdma-core's headers (libibverbs-dev): never available.
#include "transports/rdma/rdma.h"

namespace myriad {

Result<std::unique_ptr<Transport>> createRdmaTransport(const TransportContext&, PeerInfo*) {
  return notSupported("rdma: this build of Myriad has no RDMA support (built without libibverbs-dev)");
}

}  // namespace myriad
