// Device channels between ranks of one host: each side allocates its block (two flag words and its inbox,
// core/device_comm.h), exports it (a cuMem or memfd descriptor, or a legacy CUDA IPC handle), and maps the
// peer's. Ranks in one process use each other's pointers directly (CUDA cannot import its own export). The
// handles cross over a Unix socket of the pair (fd_socket.h), never the network.
#pragma once

#include "core/comm.h"
#include "core/device_comm.h"

namespace myriad {

// The opener a communicator's DeviceComm uses: reaches ranks of this host; a rank elsewhere is a clear
// error (device buffers across hosts are not supported yet).
DeviceChannelOpener ipcChannelOpener(Comm& comm);

}  // namespace myriad
