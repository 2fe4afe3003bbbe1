// The socket two ranks of one host exchange device-memory handles over: a Unix stream socket in the abstract
// namespace (no file to clean up), named by the communicator and the rank pair. The lower rank listens, the
// higher connects; either side may come first (connect retries until the deadline). A file descriptor
// travels with its message as SCM_RIGHTS, the only way to hand a cuMem or memfd handle to another process.
// The peer is checked by its credentials (SO_PEERCRED): the process the rendezvous announced, or at least
// the same user where pid namespaces differ.
#pragma once

#include <atomic>
#include <string>
#include <vector>

#include "base/clock.h"
#include "base/status.h"

namespace myriad {

struct PeerCheck {
  int pid = 0;       // expected pid of the peer; 0: check the user only
  std::string name;  // "rank 3 (host pid 4121)" for messages
};

// Connected socket to the peer of pair `name` (abstract address); `listen` on the lower rank's side.
Result<int> pairSocket(const std::string& name, bool listen, const PeerCheck& peer, Clock::time_point deadline,
                       const std::atomic<bool>* abort);
// One message: bytes plus at most one descriptor (-1: none). The descriptor is not closed.
Status sendWithFd(int sock, const std::vector<uint8_t>& bytes, int fd, Clock::time_point deadline,
                  const std::string& peer);
// Receives a message of exactly `bytes` bytes; *fd is the descriptor that came with it, or -1.
Status recvWithFd(int sock, std::vector<uint8_t>* bytes, size_t n, int* fd, Clock::time_point deadline,
                  const std::string& peer);

}  // namespace myriad
