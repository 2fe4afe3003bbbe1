// Memory registrations of user buffers. With the cache off (the default) every message registers its
// buffer and releases the registration when it completes: always correct. With MYRIAD_IB_REG_CACHE=1
// registrations are kept, found again by address range, and evicted least-recently-used once unused; that
// is only correct while buffers passed to Myriad are not freed and reallocated (a registration pins the old
// pages). Invariant: an entry in use (refs > 0) is never deregistered.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>

#include "core/status.h"
#include "transports/rdma/verbs.h"

namespace myriad {

class MrCache {
 public:
  MrCache(const Verbs& verbs, ibv_pd* pd, bool keep, std::string device)
      : verbs_(verbs), pd_(pd), keep_(keep), device_(std::move(device)) {}
  ~MrCache();
  // A registration covering [p, p + n) with local and remote write access; release() it when done.
  Result<ibv_mr*> acquire(void* p, size_t n);
  void release(ibv_mr* mr);
  size_t entries() const { return byStart_.size(); }

 private:
  struct Entry {
    ibv_mr* mr = nullptr;
    size_t bytes = 0;
    int refs = 0;
    uint64_t lastUse = 0;
  };
  void evictUnused();

  const Verbs& verbs_;
  ibv_pd* pd_;
  bool keep_;
  std::string device_;
  std::multimap<uintptr_t, Entry> byStart_;  // by start address; equal starts may coexist
  uint64_t clock_ = 0;
};

}  // namespace myriad
