// Library-internal entry points for tests and tools: communicators over any Store (threads in one process
// with a MemoryStore, forked processes with a FileStore), and unique ids that name a file store.
#pragma once

#include <memory>

#include "base/config.h"
#include "myriad/myriad.h"
#include "rendezvous/store.h"

namespace myriad {

// Like myrCommInitRank, with the rendezvous through `store` and settings from `config`.
myrResult_t commInitFromStore(myrComm_t* comm, int nranks, int rank, std::shared_ptr<Store> store,
                              const Config& config);
// A unique id whose rendezvous is a FileStore in `dir` (at most 100 bytes), with a fresh secret.
myrResult_t makeFileStoreId(const std::string& dir, myrUniqueId* id);

}  // namespace myriad
