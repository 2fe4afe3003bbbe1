// PullScheduler (see scheduler.h): the FIFO, the caps, static dealing and end-game duplicates.
#include "transports/multipath/scheduler.h"

#include <algorithm>

namespace myriad::mp {

PullScheduler::LaneQ* PullScheduler::lane(int id) {
  auto it = lanes_.find(id);
  return it == lanes_.end() ? nullptr : &it->second;
}

void PullScheduler::addLane(int id, bool scout) {
  LaneQ& l = lanes_[id];
  l.scout = scout;
  l.open = true;
}

void PullScheduler::setScout(int id, bool scout) {
  if (LaneQ* l = lane(id)) l->scout = scout;
}

void PullScheduler::setWindow(int id, uint64_t bytes) {
  if (LaneQ* l = lane(id)) l->window = bytes;
}

void PullScheduler::closeLane(int id) {
  LaneQ* l = lane(id);
  if (!l) return;
  l->open = false;
  for (auto it = l->own.rbegin(); it != l->own.rend(); ++it) fifo_.push_front(*it);
  l->own.clear();
}

void PullScheduler::removeLane(int id) {
  closeLane(id);
  LaneQ* l = lane(id);
  if (!l) return;
  std::vector<ChunkRef> flying = l->flying;
  // Oldest first at the front: walk backwards pushing to the front.
  for (auto it = flying.rbegin(); it != flying.rend(); ++it) {
    auto c = chunks_.find(*it);
    if (c == chunks_.end()) continue;
    land(id, *it, c->second.bytes);
    std::erase_if(c->second.copies, [id](const Copy& k) { return k.lane == id; });
    if (c->second.copies.empty()) fifo_.push_front(*it);
  }
  lanes_.erase(id);
}

void PullScheduler::push(ChunkRef c, uint64_t bytes) {
  chunks_[c].bytes = bytes;
  if (!limits_.adaptive) {
    std::vector<LaneQ*> open;
    for (auto& [id, l] : lanes_)
      if (l.open && !l.scout) open.push_back(&l);
    if (!open.empty()) {
      open[deal_++ % open.size()]->own.push_back(c);
      return;
    }
  }
  fifo_.push_back(c);
}

// A lane under a congestion window smaller than a chunk may still hold one chunk, as long as the windowed
// lanes together stay within the sum of their windows: N lanes with small windows then share a few chunks
// in flight between them, not one each (which would keep N chunks in a bottleneck's queue whatever the
// windows say). Scouts (spares) count against that sum too, once any lane has a window.
bool PullScheduler::room(const LaneQ& l, uint64_t bytes) const {
  if (peerInFlight_ > 0 && peerInFlight_ + bytes > limits_.peerBytes) return false;
  if (!l.scout && l.bytes + bytes <= std::min(limits_.laneBytes, l.window)) return true;
  if (l.bytes > 0) return false;
  uint64_t inFlight = 0, windows = 0;
  bool coupled = false;
  for (const auto& [id, o] : lanes_) {
    if (o.window == UINT64_MAX && !o.scout) continue;
    inFlight += o.bytes;
    if (o.window != UINT64_MAX) windows += o.window, coupled = true;
  }
  return !coupled || inFlight + bytes <= std::max(windows, bytes);
}

void PullScheduler::fly(int id, LaneQ& l, ChunkRef c, Chunk& ch, Clock::time_point now) {
  ch.copies.push_back(Copy{id, now});
  l.flying.push_back(c);
  l.bytes += ch.bytes;
  peerInFlight_ += ch.bytes;
}

void PullScheduler::land(int id, ChunkRef c, uint64_t bytes) {
  LaneQ* l = lane(id);
  if (!l) return;
  auto it = std::find(l->flying.begin(), l->flying.end(), c);
  if (it == l->flying.end()) return;
  l->flying.erase(it);
  l->bytes -= bytes;
  peerInFlight_ -= bytes;
}

std::optional<ChunkRef> PullScheduler::pull(int id, Clock::time_point now, Clock::duration dupAfter) {
  LaneQ* l = lane(id);
  if (!l || !l->open) return std::nullopt;
  std::deque<ChunkRef>& q = !limits_.adaptive && !l->own.empty() ? l->own : fifo_;
  if (!limits_.adaptive && l->scout) return std::nullopt;
  while (!q.empty()) {
    auto c = chunks_.find(q.front());
    if (c == chunks_.end() || !c->second.copies.empty()) {  // acked, or already re-sent meanwhile
      q.pop_front();
      continue;
    }
    if (!room(*l, c->second.bytes)) return std::nullopt;
    ChunkRef r = q.front();
    q.pop_front();
    fly(id, *l, r, c->second, now);
    return r;
  }
  if (!limits_.adaptive || l->scout || l->bytes > 0) return std::nullopt;
  // End-game: this lane is idle and nothing is queued; take over the oldest chunk stuck elsewhere.
  Chunk* best = nullptr;
  ChunkRef bestRef;
  for (auto& [ref, ch] : chunks_) {
    if (ch.copies.size() != 1 || ch.copies[0].lane == id || now - ch.copies[0].sent < dupAfter) continue;
    if (!best || ch.copies[0].sent < best->copies[0].sent) best = &ch, bestRef = ref;
  }
  if (!best || !room(*l, best->bytes)) return std::nullopt;
  fly(id, *l, bestRef, *best, now);
  ++duplicates_;
  return bestRef;
}

PullScheduler::Acked PullScheduler::ack(int id, ChunkRef c) {
  Acked a;
  auto it = chunks_.find(c);
  if (it == chunks_.end()) return a;
  Chunk& ch = it->second;
  a.first = true;
  a.bytes = ch.bytes;
  const Copy* credited = nullptr;
  for (const Copy& k : ch.copies)
    if (k.lane == id) credited = &k;
  if (!credited && !ch.copies.empty()) credited = &ch.copies.front();
  if (credited) {
    a.lane = credited->lane;
    a.sent = credited->sent;
  }
  for (const Copy& k : ch.copies) {
    land(k.lane, c, ch.bytes);
    if (k.lane != a.lane) a.others.push_back(k.lane);
  }
  chunks_.erase(it);
  return a;
}

uint64_t PullScheduler::laneInFlight(int id) const {
  auto it = lanes_.find(id);
  return it == lanes_.end() ? 0 : it->second.bytes;
}

size_t PullScheduler::laneChunks(int id) const {
  auto it = lanes_.find(id);
  return it == lanes_.end() ? 0 : it->second.flying.size();
}

size_t PullScheduler::queued() const {
  size_t n = fifo_.size();
  for (const auto& [id, l] : lanes_) n += l.own.size();
  return n;
}

std::optional<Clock::time_point> PullScheduler::oldestOn(int id) const {
  auto it = lanes_.find(id);
  if (it == lanes_.end()) return std::nullopt;
  std::optional<Clock::time_point> best;
  for (const ChunkRef& c : it->second.flying) {
    auto ch = chunks_.find(c);
    if (ch == chunks_.end()) continue;
    for (const Copy& k : ch->second.copies)
      if (k.lane == id && (!best || k.sent < *best)) best = k.sent;
  }
  return best;
}

}  // namespace myriad::mp
