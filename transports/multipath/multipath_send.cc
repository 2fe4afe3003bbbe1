// MultipathConnection (see multipath_connection.h): the send side: small messages onto lanes and their batch acks,
// chunks pulled by the lanes, acks feeding the path keeper.
#include <algorithm>
#include <optional>

#include "transports/multipath/multipath_connection.h"

namespace myriad::mp {

void MultipathConnection::smallAcked(int slot, uint64_t count) {
  if (slot < 0 || slot >= static_cast<int>(stats_.size())) return;
  SlotStats& st = stats_[static_cast<size_t>(slot)];
  while (!st.small.empty() && st.smallPosted - st.small.size() < count) {
    if (SendOp* s = sendOp(st.small.front().op)) {
      ++s->acked;
      smallUnacked_ -= s->total;
      st.smallBytes -= s->total;
      bytesAcked_ += s->total;
      keeper_.counted(slot, s->total);
      ++chunksAcked_;
    }
    --smallUnackedFrames_;
    st.small.pop_front();
  }
  st.lastAck = now_;
}

// A lost lane's unacknowledged small messages go back to the front of the queue, in order.
void MultipathConnection::requeueSmall(int slot) {
  SlotStats& st = stats_[static_cast<size_t>(slot)];
  for (auto it = st.small.rbegin(); it != st.small.rend(); ++it) {
    if (SendOp* s = sendOp(it->op)) smallUnacked_ -= s->total;
    --smallUnackedFrames_;
    smallQueue_.push_front(it->op);
  }
  st.smallPosted -= st.small.size();
  st.smallBytes = 0;
  st.small.clear();
}

// The lane the next small message goes on: the open active lane with room at the lowest position, as long as
// its unacknowledged small bytes stay under a batch ack's worth (so small messages keep to one lane, as on a
// plain connection: in order, one socket for the peer to read); past that, when acks lag (a slow path or a
// receiver that is behind), the one with the fewest unacknowledged small bytes. -1 when none has room.
int MultipathConnection::smallSlot() const {
  int first = -1, fewest = -1;
  for (int slot = 0; slot < paths().size(); ++slot) {
    const Path& p = paths().path(slot);
    const Lane* l = out_[static_cast<size_t>(slot)].get();
    if (p.state != PathState::kActive || !l || !l->canPost()) continue;
    if (first < 0 || p.position < paths().path(first).position) first = slot;
    if (fewest < 0 || stats_[static_cast<size_t>(slot)].smallBytes < stats_[static_cast<size_t>(fewest)].smallBytes)
      fewest = slot;
  }
  if (first >= 0 && stats_[static_cast<size_t>(first)].smallBytes < kSmallAckBytes) return first;
  return fewest;
}

void MultipathConnection::feedSmall() {
  while (!smallQueue_.empty()) {
    const int slot = smallSlot();
    if (slot < 0) return;
    Lane* l = out_[static_cast<size_t>(slot)].get();
    SlotStats& st = stats_[static_cast<size_t>(slot)];
    SendOp* s = sendOp(smallQueue_.front());
    if (!s) {  // cannot happen: an op leaves sends_ only once acknowledged
      smallQueue_.pop_front();
      continue;
    }
    if (smallUnacked_ > 0 && smallUnacked_ + s->total > kSmallUnackedCap) return;
    FrameHeader h;
    h.kind = FrameHeader::kSmall;
    h.tag = s->tag;
    h.chunks = 1;
    h.lane = static_cast<uint32_t>(slot);
    h.op = s->op;
    h.length = s->total;
    h.total = s->total;
    l->postData(h, s->data);
    s->posted = true;
    smallUnacked_ += s->total;
    ++smallUnackedFrames_;
    st.small.push_back(SmallSent{s->op, now_});
    st.smallBytes += s->total;
    ++st.smallPosted;
    smallQueue_.pop_front();
    l->flush();  // out now: a small message is latency, and the peer may be waiting on it
  }
}

void MultipathConnection::ackArrived(Lane& lane, const FrameHeader& h) {
  noteProgress(now_);
  if (h.kind == FrameHeader::kSmallAck) return smallAcked(lane.slot, h.op);
  if (h.kind == FrameHeader::kHeld) {  // the path works; the chunk stays unacknowledged
    if (lane.slot >= 0 && lane.slot < static_cast<int>(stats_.size()))
      stats_[static_cast<size_t>(lane.slot)].lastHeld = now_;
    return;
  }
  // The ack may come back on any lane: it names the slot that carried the chunk.
  auto a = sched_.ack(static_cast<int>(h.lane), ChunkRef{h.op, h.index});
  if (!a.first) return;
  SendOp* s = sendOp(h.op);
  if (s) ++s->acked;
  for (int other : a.others)
    if (other >= 0 && other < static_cast<int>(out_.size()) && out_[static_cast<size_t>(other)])
      out_[static_cast<size_t>(other)]->cancel(h.op, h.index);
  ++chunksAcked_;
  bytesAcked_ += a.bytes;
  if (a.lane < 0 || a.lane >= static_cast<int>(stats_.size())) return;
  SlotStats& st = stats_[static_cast<size_t>(a.lane)];
  auto now = now_;
  // The chunk's whole latency, queueing included: a path behind a congested spine shows it here, even
  // while its acks arrive back to back.
  double service = secondsBetween(a.sent, now);
  st.lastAck = now;
  keeper_.served(a.lane, a.bytes, service);
  couple(a.lane, a.bytes);
}

// The path's congestion window (coupled_window.h): its acknowledged bytes grow it, a retransmission its lane
// reports halves it. The lane is asked at most once per round trip of its path (and per millisecond).
void MultipathConnection::couple(int slot, uint64_t bytes) {
  if (!o_.coupled || paths().path(slot).state != PathState::kActive) return;
  coupled_.add(slot);
  coupled_.acked(slot, bytes);
  SlotStats& st = stats_[static_cast<size_t>(slot)];
  const Lane* l = out_[static_cast<size_t>(slot)].get();
  const double every = std::max(1e-3, coupled_.rttSec(slot));
  if (l && secondsBetween(st.congestionRead, now_) >= every) {
    st.congestionRead = now_;
    if (auto c = l->congestion()) coupled_.observe(slot, *c, sched_.laneInFlight(slot), now_);
  }
  sched_.setWindow(slot, coupled_.window(slot));
}

// The path carries no more data of its own (retired, quarantined): its window leaves the coupled sums.
void MultipathConnection::uncouple(int slot) {
  coupled_.remove(slot);
  sched_.setWindow(slot, UINT64_MAX);
}

bool MultipathConnection::anyHolds(uint64_t op) const {
  for (const auto& l : out_)
    if (l && l->holds(op)) return true;
  return false;
}

Clock::duration MultipathConnection::dupAfter(int slot) const {
  const PathView* v = keeper_.view(slot);
  double s = v && v->samples > 0 ? v->service : 0.002;
  return std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(2 * s));
}

// Lanes pull chunks one at a time, the lane with the fewest bytes in flight first (ties: the turn rotates,
// so that no slot number is favoured), until none takes another. Paths that serve alike thus carry alike
// (a greedy pull would let whichever lane acks first take most, and make its siblings look slow), while a
// slow path, whose chunks stay in flight longer, carries less. The order is sorted once per feed; a lane
// that pulled moves back past the lanes now lighter than it (as a stable sort would place it), and the scan
// starts again from the lightest.
void MultipathConnection::feed() {
  feedSmall();
  if (sched_.idle()) return;  // no chunk queued or in flight: nothing to pull, nothing to duplicate
  auto now = now_;
  const int n = paths().size();
  feedStart_ = n > 0 ? (feedStart_ + 1) % n : 0;
  feedOrder_.clear();
  for (int k = 0; k < n; ++k) {
    int slot = (feedStart_ + k) % n;
    PathState st = paths().path(slot).state;
    if (out_[static_cast<size_t>(slot)] && (st == PathState::kActive || st == PathState::kSpare))
      feedOrder_.push_back(FeedLane{sched_.laneInFlight(slot), slot});
  }
  const auto lighter = [](const FeedLane& a, const FeedLane& b) { return a.inFlight < b.inFlight; };
  std::stable_sort(feedOrder_.begin(), feedOrder_.end(), lighter);
  for (size_t i = 0; i < feedOrder_.size();) {
    const int slot = feedOrder_[i].slot;
    Lane* l = out_[static_cast<size_t>(slot)].get();
    std::optional<ChunkRef> c;
    if (l->canPost()) c = sched_.pull(slot, now, dupAfter(slot));
    if (!c) {
      ++i;
      continue;
    }
    postChunk(*l, slot, *c);
    const FeedLane moved{sched_.laneInFlight(slot), slot};
    auto from = feedOrder_.begin() + static_cast<std::ptrdiff_t>(i);
    auto to = std::lower_bound(from + 1, feedOrder_.end(), moved, lighter);
    std::rotate(from, from + 1, to);
    *(to - 1) = moved;
    i = 0;
  }
}

void MultipathConnection::postChunk(Lane& l, int slot, ChunkRef c) {
  SendOp* s = sendOp(c.op);
  if (!s) return;  // cannot happen: chunks leave the scheduler before their op
  const ChunkSpan& span = s->chunks[c.index];
  FrameHeader h;
  h.kind = FrameHeader::kData;
  h.tag = s->tag;
  h.index = span.index;
  h.chunks = static_cast<uint32_t>(s->chunks.size());
  h.lane = static_cast<uint32_t>(slot);
  h.op = s->op;
  h.offset = span.offset;
  h.length = span.length;
  h.total = s->total;
  l.postData(h, s->data + span.offset);
  s->posted = true;
}

}  // namespace myriad::mp
