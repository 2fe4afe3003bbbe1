// PlanSet: a rank's Schedule compacted into a PlanShape, hashed, and shared with an equal shape if one
// exists (compared field by field: equal hashes are only candidates).
#include "tools/sim/plan_set.h"

#include "plan/dtype.h"

namespace myriad::netsim {
namespace {

uint64_t mix(uint64_t h, uint64_t v) {
  h ^= v + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2);
  return h;
}

template <typename T>
uint64_t hashOf(uint64_t h, const std::vector<T>& v) {
  h = mix(h, v.size());
  for (const T& x : v) h = mix(h, static_cast<uint64_t>(x));
  return h;
}

}  // namespace

double PlanShape::touched(size_t step) const {
  const double b = static_cast<double>(bytes[step]);
  switch (kind[step]) {
    case Kind::kReduce:
    case Kind::kRecvReduce: return 3.0 * b;
    case Kind::kScale:
    case Kind::kCopy: return 2.0 * b;
    default: return 0;
  }
}

bool PlanShape::operator==(const PlanShape& o) const {
  return hash == o.hash && kind == o.kind && slot == o.slot && bytes == o.bytes && numDeps == o.numDeps &&
         afterAt == o.afterAt && after == o.after;  // ordinal, roots and the slot lists follow from these
}

Result<PlanSet> PlanSet::of(const std::vector<Schedule>& schedules) {
  PlanSet set(schedules.empty() ? std::string() : schedules.front().name());
  for (const Schedule& s : schedules) MYR_TRY(set.add(s, static_cast<int>(schedules.size())));
  return set;
}

void PlanShape::finish() {
  const size_t m = size();
  numDeps.assign(m, 0), ordinal.assign(m, 0), roots.clear(), sendsTo.clear(), recvsFrom.clear();
  for (int32_t j : after) ++numDeps[static_cast<size_t>(j)];
  for (size_t i = 0; i < m; ++i) {
    if (numDeps[i] == 0) roots.push_back(static_cast<int32_t>(i));
    if (!Schedule::isMessage(kind[i])) continue;
    const size_t k = slot[i];
    if (sendsTo.size() <= k) sendsTo.resize(k + 1), recvsFrom.resize(k + 1);
    auto& list = kind[i] == Kind::kSend ? sendsTo[k] : recvsFrom[k];
    ordinal[i] = static_cast<uint32_t>(list.size());
    list.push_back(static_cast<int32_t>(i));
  }
  uint64_t h = 0;
  h = hashOf(h, kind), h = hashOf(h, slot), h = hashOf(h, bytes), h = hashOf(h, numDeps);
  h = hashOf(h, after);
  hash = h;
}

Result<PlanShape> PlanSet::compact(const Schedule& plan, int n, int r, std::vector<int32_t>* peers) {
  using Kind = Schedule::Kind;
  if (plan.next())
    return notSupported("sim: " + plan.name() + " plans in two stages (data-dependent); the simulator runs " +
                        "one-stage plans only");
  if (slotOf_.size() != static_cast<size_t>(n)) slotOf_.assign(static_cast<size_t>(n), -1);
  const size_t m = plan.size();
  PlanShape s;
  s.kind.resize(m), s.slot.assign(m, 0), s.bytes.resize(m);
  s.afterAt.assign(m + 1, 0);
  const size_t firstPeer = peers->size();
  auto forgetSlots = [&] {  // slotOf_ back to all -1 for the next rank
    for (size_t k = firstPeer; k < peers->size(); ++k) slotOf_[static_cast<size_t>((*peers)[k])] = -1;
  };
  for (size_t i = 0; i < m; ++i) {
    const Schedule::StepInfo& st = plan.steps()[i];
    s.kind[i] = st.kind;
    const bool elements = st.kind == Kind::kReduce || st.kind == Kind::kScale;
    s.bytes[i] = elements ? st.n * dtypeSize(st.dtype) : st.n;
    for (Schedule::Step d : plan.deps(static_cast<Schedule::Step>(i))) ++s.afterAt[static_cast<size_t>(d) + 1];
    if (!Schedule::isMessage(st.kind)) continue;
    if (st.peer < 0 || st.peer >= n || st.peer == r) {
      forgetSlots();
      peers->resize(firstPeer);
      return internalError("sim: rank " + std::to_string(r) + " step " + std::to_string(i) + " names peer " +
                           std::to_string(st.peer));
    }
    int32_t& slot = slotOf_[static_cast<size_t>(st.peer)];
    if (slot < 0) {
      slot = static_cast<int32_t>(peers->size() - firstPeer);
      peers->push_back(st.peer);
    }
    s.slot[i] = static_cast<uint32_t>(slot);
  }
  forgetSlots();
  // The dependents of each step, in one array (CSR), in step order.
  for (size_t i = 0; i < m; ++i) s.afterAt[i + 1] += s.afterAt[i];
  s.after.resize(s.afterAt[m]);
  {
    std::vector<uint32_t> fill(s.afterAt.begin(), s.afterAt.end() - 1);
    for (size_t i = 0; i < m; ++i)
      for (Schedule::Step d : plan.deps(static_cast<Schedule::Step>(i)))
        s.after[fill[static_cast<size_t>(d)]++] = static_cast<int32_t>(i);
  }
  s.finish();
  return s;
}

Status PlanSet::add(const Schedule& plan, int n) {
  MYR_ASSIGN_OR_RETURN(PlanShape s, compact(plan, n, nranks(), &peers_));
  const size_t m = s.size();
  const uint64_t h = s.hash;
  std::vector<uint32_t>& same = byHash_[h];
  uint32_t id = static_cast<uint32_t>(shapes_.size());
  for (uint32_t k : same)
    if (shapes_[k] == s) id = k;
  if (id == shapes_.size()) {
    same.push_back(id);
    shapes_.push_back(std::move(s));
  }
  shapeOf_.push_back(id);
  peerAt_.push_back(static_cast<uint32_t>(peers_.size()));
  steps_ += m;
  if (algorithm_.empty()) algorithm_ = plan.name();
  return Status::ok();
}

void PlanSet::addMoved(int like, int n) {
  const int r = nranks();
  const uint32_t id = shapeOf_[static_cast<size_t>(like)];
  const int64_t by = r - like;
  for (uint32_t k = 0; k < slots(like); ++k) peers_.push_back(static_cast<int32_t>(((peer(like, k) + by) % n + n) % n));
  shapeOf_.push_back(id);
  peerAt_.push_back(static_cast<uint32_t>(peers_.size()));
  steps_ += shapes_[id].size();
}

PlanSet PlanSet::withShapes(std::vector<PlanShape> shapes) const {
  PlanSet out(algorithm_);
  out.shapes_ = std::move(shapes);
  out.shapeOf_ = shapeOf_, out.peerAt_ = peerAt_, out.peers_ = peers_;
  for (uint32_t id : shapeOf_) out.steps_ += out.shapes_[id].size();
  return out;
}

Status PlanSet::check(int r, const Schedule& plan, int n) {
  std::vector<int32_t> peers;
  MYR_ASSIGN_OR_RETURN(PlanShape s, compact(plan, n, r, &peers));
  const std::string who = "sim: rank " + std::to_string(r) + "'s plan of " + plan.name();
  if (!(s == shape(r))) return internalError(who + " is not the shape its plan class claims");
  for (uint32_t k = 0; k < slots(r); ++k)
    if (k >= peers.size() || peers[k] != peer(r, k))
      return internalError(who + " names peer " + (k < peers.size() ? std::to_string(peers[k]) : "none") + " in slot " +
                           std::to_string(k) + ", its plan class " + std::to_string(peer(r, k)));
  if (peers.size() != slots(r)) return internalError(who + " has more peers than its plan class claims");
  return Status::ok();
}

}  // namespace myriad::netsim
