// Memory registrations of the buffers messages use. Three kinds of entry, one lookup by address range:
//  - pinned: a range that stays mapped until unpin() (a buffer the user registered with myrCommRegister,
//    or the communicator's scratch memory), registered once when pinned; messages inside it use it;
//  - per message (the default for every other buffer): registered when a message starts and deregistered
//    when it ends, always correct;
//  - kept (MYRIAD_IB_REG_CACHE=1): per-message registrations kept after use, found again by range and
//    evicted least-recently-used once unused; only correct while the application does not free and
//    reallocate buffers it passed in (a registration pins the old pages, and nothing says they were freed).
// Invariants: an entry in use (refs > 0) is never deregistered; once unpin() returns, no lookup finds that
// range's pinned entry, nor a kept entry overlapping it (the memory is about to be freed).
// Not thread-safe: the transport calls it under the communicator's execution lock.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <string>

#include "base/status.h"
#include "transports/rdma/verbs.h"

namespace myriad {

class MrCache {
 public:
  struct Stats {
    uint64_t acquires = 0;       // message buffers looked up
    uint64_t registrations = 0;  // ibv_reg_mr calls, pins included
    uint64_t pinnedHits = 0;     // acquires served by a pinned range
    uint64_t keptHits = 0;       // acquires served by a kept registration (MYRIAD_IB_REG_CACHE=1)
  };

  MrCache(const Verbs& verbs, ibv_pd* pd, bool keep, std::string device)
      : verbs_(verbs), pd_(pd), keep_(keep), device_(std::move(device)) {}
  ~MrCache();
  MrCache(const MrCache&) = delete;
  MrCache& operator=(const MrCache&) = delete;

  // Registers [p, p + n) now, under `id`, until unpin(id).
  Status pin(uint64_t id, void* p, size_t n);
  // The pinned registration goes now, or when the last message using it releases it; kept registrations
  // overlapping the range go the same way. Unknown ids are ignored.
  void unpin(uint64_t id);
  // A registration covering [p, p + n) with local and remote write access; release() it when done.
  Result<ibv_mr*> acquire(void* p, size_t n);
  void release(ibv_mr* mr);

  size_t entries() const { return byStart_.size(); }
  const Stats& stats() const { return stats_; }

 private:
  struct Entry {
    ibv_mr* mr = nullptr;
    size_t bytes = 0;
    int refs = 0;
    uint64_t lastUse = 0;
    uint64_t pin = 0;      // the pin's id; 0: a per-message or kept registration
    bool retired = false;  // lookups skip it; deregistered when its last user releases it
  };
  using Map = std::multimap<uintptr_t, Entry>;  // by start address; equal starts may coexist

  Result<ibv_mr*> registerRange(void* p, size_t n);
  // Deregisters now when unused, else retires.
  void drop(Map::iterator it);
  void evictUnused();

  const Verbs& verbs_;
  ibv_pd* pd_;
  bool keep_;
  std::string device_;
  Map byStart_;
  std::map<uint64_t, Map::iterator> pins_;  // multimap iterators stay valid across other inserts and erases
  uint64_t clock_ = 0;
  Stats stats_;
};

}  // namespace myriad
