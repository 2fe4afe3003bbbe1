// Registration cache (see mr_cache.h).
#include "transports/rdma/mr_cache.h"

#include <cerrno>
#include <iterator>

namespace myriad {
namespace {
constexpr size_t kMaxKept = 64;  // unused kept registrations at most
constexpr int kAccess = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ;

bool covers(uintptr_t start, size_t bytes, uintptr_t a, size_t n) {
  return start <= a && a + n <= start + bytes;
}
}  // namespace

MrCache::~MrCache() {
  for (auto& [start, e] : byStart_) verbs_.deregMr(e.mr);
}

Result<ibv_mr*> MrCache::registerRange(void* p, size_t n) {
  ibv_mr* mr = verbs_.regMr(pd_, p, n, kAccess);
  if (!mr)
    return systemError("rdma: ibv_reg_mr of " + std::to_string(n) + " bytes on " + device_ +
                           " failed (locked-memory limit, ulimit -l?)",
                       errno);
  ++stats_.registrations;
  return mr;
}

Status MrCache::pin(uint64_t id, void* p, size_t n) {
  if (pins_.count(id)) return internalError("rdma: pin " + std::to_string(id) + " exists already");
  MYR_ASSIGN_OR_RETURN(ibv_mr * mr, registerRange(p, n));
  Entry e;
  e.mr = mr;
  e.bytes = n;
  e.pin = id;
  pins_.emplace(id, byStart_.emplace(reinterpret_cast<uintptr_t>(p), e));
  return Status::ok();
}

void MrCache::unpin(uint64_t id) {
  auto pin = pins_.find(id);
  if (pin == pins_.end()) return;
  const uintptr_t start = pin->second->first;
  const uintptr_t end = start + pin->second->second.bytes;
  drop(pin->second);
  pins_.erase(pin);
  for (auto it = byStart_.begin(); it != byStart_.end() && it->first < end;) {
    auto next = std::next(it);
    const Entry& e = it->second;
    if (e.pin == 0 && !e.retired && it->first + e.bytes > start) drop(it);  // a kept entry overlapping it
    it = next;
  }
}

void MrCache::drop(Map::iterator it) {
  if (it->second.refs > 0) {
    it->second.retired = true;
    return;
  }
  verbs_.deregMr(it->second.mr);
  byStart_.erase(it);
}

Result<ibv_mr*> MrCache::acquire(void* p, size_t n) {
  ++stats_.acquires;
  const uintptr_t a = reinterpret_cast<uintptr_t>(p);
  // Every entry starting at or below `a` may cover it. There are few (the pins, at most kMaxKept unused
  // kept ones and those in flight), so a scan from the nearest start down is enough. Pins win over kept
  // registrations; per-message ones are never shared.
  Entry* kept = nullptr;
  for (auto it = byStart_.upper_bound(a); it != byStart_.begin();) {
    --it;
    Entry& e = it->second;
    if (e.retired || !covers(it->first, e.bytes, a, n)) continue;
    if (e.pin) {
      ++e.refs;
      ++stats_.pinnedHits;
      return e.mr;
    }
    if (keep_ && !kept) kept = &e;
  }
  if (kept) {
    ++kept->refs;
    kept->lastUse = ++clock_;
    ++stats_.keptHits;
    return kept->mr;
  }
  MYR_ASSIGN_OR_RETURN(ibv_mr * mr, registerRange(p, n));
  Entry e;
  e.mr = mr;
  e.bytes = n;
  e.refs = 1;
  e.lastUse = ++clock_;
  byStart_.emplace(a, e);
  if (keep_) evictUnused();
  return mr;
}

void MrCache::release(ibv_mr* mr) {
  if (!mr) return;
  auto [lo, hi] = byStart_.equal_range(reinterpret_cast<uintptr_t>(mr->addr));
  auto it = lo;
  while (it != hi && it->second.mr != mr) ++it;
  if (it == hi) return;  // not ours: nothing to do
  Entry& e = it->second;
  if (--e.refs > 0) return;
  if (e.retired || (!keep_ && e.pin == 0))
    drop(it);
  else if (e.pin == 0)
    evictUnused();
}

void MrCache::evictUnused() {
  size_t kept = 0;
  for (const auto& [start, e] : byStart_) kept += e.pin == 0 && !e.retired && e.refs == 0;
  while (kept > kMaxKept) {
    auto victim = byStart_.end();
    for (auto it = byStart_.begin(); it != byStart_.end(); ++it) {
      const Entry& e = it->second;
      if (e.pin == 0 && !e.retired && e.refs == 0 && (victim == byStart_.end() || e.lastUse < victim->second.lastUse))
        victim = it;
    }
    drop(victim);  // unused: deregistered now
    --kept;
  }
}

}  // namespace myriad
