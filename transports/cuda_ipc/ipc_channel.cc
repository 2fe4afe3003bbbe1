#include "transports/cuda_ipc/ipc_channel.h"

#include <unistd.h>

#include <cstring>

#include "base/wire.h"
#include "transports/cuda_ipc/fd_socket.h"
#include "transports/cuda_ipc/ipc_hello.h"

namespace myriad {
namespace {

using ipc::Hello;
using ipc::kHelloBytes;

Result<std::unique_ptr<DeviceChannel>> open(Comm& comm, Device& device, int peer) {
  const PeerInfo& me = comm.peer(comm.rank());
  const PeerInfo& them = comm.peer(peer);
  const std::string who = them.describe();
  if (them.hostId != me.hostId)
    return invalidUsage("rank " + std::to_string(comm.rank()) + ": device buffers with " + who +
                        " on another host: between hosts, device memory is not supported yet (use host buffers)");
  auto ch = std::make_unique<DeviceChannel>();
  ch->peer = peer;
  ch->layout.slots = static_cast<uint32_t>(comm.config().deviceSlots);
  ch->layout.slotBytes = comm.config().deviceSlotBytes;
  MYR_ASSIGN_OR_RETURN(void* mine, device.alloc(ch->layout.bytes()));
  ch->mine = static_cast<uint8_t*>(mine);
  ch->release = [&device, mine] { device.free(mine); };
  // The flags start at zero before the peer can see them; the inbox needs nothing.
  for (size_t i = 0; i < ChannelLayout::kFlagWords; ++i)
    MYR_TRY(device.releaseFlag(DeviceChannel::flagWord(ch->mine, i), 0));

  const bool samePid = them.pid == me.pid && them.pidNamespace == me.pidNamespace;
  SharedMemoryHandle exported;
  if (!samePid) {
    MYR_ASSIGN_OR_RETURN(exported, device.exportMemory(mine));
  }
  Hello hello;
  hello.rank = comm.rank();
  hello.pid = me.pid;
  hello.layout = ch->layout;
  hello.bytes = ch->layout.bytes();
  hello.mapBytes = exported.bytes;  // 0 within one process: nothing is mapped
  hello.base = reinterpret_cast<uintptr_t>(mine);
  hello.blob = exported.blob;

  const auto deadline = deadlineIn(comm.config().timeoutMs);
  const std::string name = "myriad-dev/" + comm.commTag() + "/" + std::to_string(std::min(comm.rank(), peer)) + "-" +
                           std::to_string(std::max(comm.rank(), peer));
  PeerCheck check{them.pidNamespace == me.pidNamespace ? them.pid : 0, who};
  auto sock = pairSocket(name, comm.rank() < peer, check, deadline, comm.errors().flag());
  if (!sock.isOk()) {
    if (exported.fd >= 0) ::close(exported.fd);
    return sock.takeStatus();
  }
  int s = sock.take();
  std::vector<uint8_t> fixed;
  int fd = -1;
  Status st = sendWithFd(s, ipc::encodeHello(hello), exported.fd, deadline, who);
  if (exported.fd >= 0) ::close(exported.fd);
  if (st.isOk()) st = recvWithFd(s, &fixed, kHelloBytes, &fd, deadline, who);
  Result<Hello> theirs = st.isOk() ? ipc::decodeHello(fixed, peer, who) : Result<Hello>(st);
  if (theirs.isOk() && !theirs.value().blob.empty()) {
    std::vector<uint8_t> blob;
    int extra = -1;
    st = recvWithFd(s, &blob, theirs.value().blob.size(), &extra, deadline, who);
    if (extra >= 0) ::close(extra);
    if (st.isOk()) theirs.value().blob = std::move(blob);
  }
  ::close(s);
  if (!st.isOk() || !theirs.isOk()) {
    if (fd >= 0) ::close(fd);
    return st.isOk() ? theirs.takeStatus() : st;
  }
  Hello h = theirs.take();
  ch->peerLayout = h.layout;
  if (samePid) {
    if (fd >= 0) ::close(fd);
    ch->theirs = reinterpret_cast<uint8_t*>(static_cast<uintptr_t>(h.base));
    return ch;
  }
  if (fd < 0 && h.blob.empty())
    return invalidUsage("device memory exchange with " + who + ": no handle came with its hello");
  if (h.mapBytes == 0) {
    if (fd >= 0) ::close(fd);
    return invalidUsage("device memory exchange with " + who + ": its hello exports no memory");
  }
  // The importer maps the whole allocation (cuMemMap takes whole allocations), not only the inbox in it.
  SharedMemoryHandle handle{fd, std::move(h.blob), h.mapBytes};
  MYR_ASSIGN_OR_RETURN(void* mapped, device.importMemory(std::move(handle)));
  ch->theirs = static_cast<uint8_t*>(mapped);
  ch->release = [&device, mine, mapped] {
    device.closeImported(mapped);
    device.free(mine);
  };
  return ch;
}

}  // namespace

DeviceChannelOpener ipcChannelOpener(Comm& comm) {
  return [&comm](Device& device, int peer) { return open(comm, device, peer); };
}

}  // namespace myriad
