// Registration cache (see mr_cache.h).
#include "transports/rdma/mr_cache.h"

#include <cerrno>
#include <string>

namespace myriad {
namespace {
constexpr size_t kMaxKept = 64;  // unused registrations kept at most
constexpr int kAccess = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ;
}  // namespace

MrCache::~MrCache() {
  for (auto& [start, e] : byStart_) verbs_.deregMr(e.mr);
}

Result<ibv_mr*> MrCache::acquire(void* p, size_t n) {
  const uintptr_t a = reinterpret_cast<uintptr_t>(p);
  if (keep_) {
    // Few entries (at most kMaxKept unused plus those in flight): a scan from the nearest start is enough.
    for (auto it = byStart_.upper_bound(a); it != byStart_.begin();) {
      --it;
      if (it->first + it->second.bytes >= a + n) {
        ++it->second.refs;
        it->second.lastUse = ++clock_;
        return it->second.mr;
      }
    }
  }
  ibv_mr* mr = verbs_.regMr(pd_, p, n, kAccess);
  if (!mr)
    return systemError("rdma: ibv_reg_mr of " + std::to_string(n) + " bytes on " + device_ +
                           " failed (locked-memory limit, ulimit -l?)",
                       errno);
  byStart_.emplace(a, Entry{mr, n, 1, ++clock_});
  evictUnused();
  return mr;
}

void MrCache::release(ibv_mr* mr) {
  if (!mr) return;
  auto [lo, hi] = byStart_.equal_range(reinterpret_cast<uintptr_t>(mr->addr));
  auto it = lo;
  while (it != hi && it->second.mr != mr) ++it;
  if (it == hi) return;  // not ours: nothing to do
  if (--it->second.refs > 0) return;
  if (!keep_) {
    verbs_.deregMr(mr);
    byStart_.erase(it);
    return;
  }
  evictUnused();
}

void MrCache::evictUnused() {
  while (byStart_.size() > kMaxKept) {
    auto victim = byStart_.end();
    for (auto it = byStart_.begin(); it != byStart_.end(); ++it)
      if (it->second.refs == 0 && (victim == byStart_.end() || it->second.lastUse < victim->second.lastUse))
        victim = it;
    if (victim == byStart_.end()) return;
    verbs_.deregMr(victim->second.mr);
    byStart_.erase(victim);
  }
}

}  // namespace myriad
