// openTransports: shm, rdma (MYRIAD_NET=rdma must work; auto uses it where it works and says why not at
// INFO; tcp never tries), tcp.
#include "transports/factory.h"

#include "base/log.h"
#include "transports/rdma/rdma.h"
#include "transports/shm/shm_transport.h"
#include "transports/tcp/tcp_transport.h"

namespace myriad {
namespace {

// The rdma transport, null when MYRIAD_NET lets the communicator do without one.
Result<std::unique_ptr<Transport>> openNetwork(const TransportContext& ctx, PeerInfo* self) {
  const std::string& net = ctx.config->net;
  if (net == "tcp") return std::unique_ptr<Transport>();
  auto rdma = createRdmaTransport(ctx, self);
  if (rdma.isOk()) return rdma.take();
  Status why = rdma.takeStatus();
  if (net == "rdma")
    return Status(why.code() == Code::kNotSupported ? Code::kSystemError : why.code(),
                  "MYRIAD_NET=rdma, but " + why.message());
  if (why.code() != Code::kNotSupported) return why;
  MYR_LOG(kInfo, kNet, ctx.rank, "rdma not used, tcp instead: " + why.message());
  return std::unique_ptr<Transport>();
}

}  // namespace

Result<std::vector<std::unique_ptr<Transport>>> openTransports(const TransportContext& ctx, PeerInfo* self) {
  // tcp first: it fills in the address every peer needs, whatever else this rank has.
  MYR_ASSIGN_OR_RETURN(std::unique_ptr<TcpTransport> tcp, TcpTransport::create(ctx, self));
  MYR_ASSIGN_OR_RETURN(std::unique_ptr<ShmTransport> shm, ShmTransport::create(ctx));
  MYR_ASSIGN_OR_RETURN(std::unique_ptr<Transport> rdma, openNetwork(ctx, self));
  std::vector<std::unique_ptr<Transport>> out;
  out.push_back(std::move(shm));
  if (rdma) out.push_back(std::move(rdma));
  out.push_back(std::move(tcp));
  return out;
}

}  // namespace myriad
