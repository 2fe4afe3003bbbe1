// MultipathConnection (see multipath_connection.h): lane upkeep, the send and receive sides, rounds.
#include "transports/multipath/multipath_connection.h"

#include <sys/epoll.h>

#include <algorithm>
#include <cstring>

#include "base/log.h"

namespace myriad::mp {
namespace {
constexpr int kRoundAcksPerPath = 8;
constexpr double kSpareGain = 1.25;  // a spare is worth moving to when its chunks are served this much faster
// A lane that has not opened by then is given up for another port (its SYN may hash onto a dead spine):
// 8x the slowest open seen toward this peer, within [0.2 s, 1 s] (1 s until one has opened).
constexpr double kOpenTimeoutMinSec = 0.2, kOpenTimeoutMaxSec = 1.0;
constexpr auto kReopenBackoff = std::chrono::milliseconds(20);
constexpr double kIncomingLostSec = 2.0;
constexpr double kAwaitReplacementSec = 10.0;
constexpr auto kBackCheckEvery = std::chrono::milliseconds(100);
constexpr double kLoneStallSec = 3.0;
// Stalls are judged against 0.25 s and more (ControlParams::stallMinSec): a look every 10 ms is plenty, and
// keeps the per-lane scans out of every poll.
constexpr auto kStallCheckEvery = std::chrono::milliseconds(10);
// Once the peer's lanes are all here, the listener is asked for a new one (a re-path's) this often, not on
// every poll: an accept(2) that finds nothing costs a system call per poll.
constexpr auto kAcceptEvery = std::chrono::milliseconds(5);
// Small messages: a batch ack leaves once it covers this many messages or bytes, or its oldest message is
// this old. The sender stops handing small messages to lanes while this many bytes of them are
// unacknowledged; the receiver holds its batch acks while it keeps this many early bytes of them (so the
// sender's cap bounds what a receiver that is behind must hold).
constexpr uint64_t kSmallAckFrames = 32;
constexpr uint64_t kSmallAckBytes = 1 << 20;
constexpr auto kSmallAckDelay = std::chrono::microseconds(500);
constexpr uint64_t kSmallUnackedCap = 4 << 20;
constexpr uint64_t kEarlySmallCap = 4 << 20;

double secondsBetween(Clock::time_point a, Clock::time_point b) {
  return std::chrono::duration<double>(b - a).count();
}
}  // namespace

MultipathConnection::MultipathConnection(const PeerInfo& peer, MultipathOptions o, std::unique_ptr<LaneFactory> factory)
    : Connection(peer),
      o_(std::move(o)),
      factory_(std::move(factory)),
      paths_(o_.paths, o_.adaptive ? o_.spares : 0, o_.ports, o_.seed),
      sched_(SchedulerLimits{o_.inflightBytes,
                             std::max<uint64_t>(o_.chunkBytes, 2 * o_.inflightBytes / static_cast<uint64_t>(o_.paths)),
                             1, o_.adaptive}),
      ctl_(o_.control, o_.seed * 0x9e3779b97f4a7c15ULL + 1) {}

MultipathConnection::~MultipathConnection() {
  forgetTelemetry(o_.commTag, peer_.rank);
}

void MultipathConnection::fail(Status s) {
  if (fatal_.isOk()) fatal_ = std::move(s);
}

// ---- posting -------------------------------------------------------------------------------------------

Status MultipathConnection::postSend(Request* r) {
  if (!busy()) noteProgress();
  r->done = false;
  SendOp s;
  s.r = r;
  s.op = nextSendOp_++;
  s.total = r->bytes;
  s.tag = r->tag;
  s.chunks = planChunks(r->bytes, o_.splitBytes, o_.chunkBytes);
  if (r->bytes <= smallBytes()) {  // small: one frame from a staged copy, done at once
    const auto* p = static_cast<const uint8_t*>(r->buf);
    s.staged = pool_.take();
    s.staged.assign(p, p + r->bytes);
    s.data = s.staged.data();
    smallQueue_.push_back(s.op);
  } else {
    s.data = static_cast<const uint8_t*>(r->buf);
    for (const ChunkSpan& c : s.chunks) sched_.push(ChunkRef{s.op, c.index}, c.length);
  }
  sends_.push_back(std::move(s));
  ++pendingRequests_;
  ++pendingSends_;
  return Status::ok();
}

Status MultipathConnection::postRecv(Request* r) {
  if (!busy()) noteProgress();
  r->done = false;
  RecvOp op;
  op.r = r;
  op.op = nextRecvOp_++;
  recvs_.push_back(std::move(op));
  ++pendingRequests_;
  applyEarly(recvs_.back());
  return fatal_;
}

MultipathConnection::SendOp* MultipathConnection::sendOp(uint64_t op) {
  if (sends_.empty() || op < sends_.front().op) return nullptr;
  uint64_t i = op - sends_.front().op;
  return i < sends_.size() ? &sends_[static_cast<size_t>(i)] : nullptr;
}

MultipathConnection::RecvOp* MultipathConnection::recvOp(uint64_t op) {
  if (recvs_.empty() || op < recvs_.front().op) return nullptr;
  uint64_t i = op - recvs_.front().op;
  return i < recvs_.size() ? &recvs_[static_cast<size_t>(i)] : nullptr;
}

// ---- receive side --------------------------------------------------------------------------------------

Status MultipathConnection::startRecv(RecvOp& op, const FrameHeader& h) {
  if (op.started) {
    if (!chunkFits(h, op.r->bytes, op.re))
      return Status(Code::kRemoteError, "multipath: malformed chunk from " + peer_.describe());
    return Status::ok();
  }
  if (h.tag != op.r->tag || h.total != op.r->bytes)
    return Status(Code::kInvalidUsage,
                  "tcp: message from " + peer_.describe() + " does not match this rank's call: got " +
                      std::to_string(h.total) + " bytes with tag " + std::to_string(h.tag) + ", expected " +
                      std::to_string(op.r->bytes) + " bytes with tag " + std::to_string(op.r->tag) +
                      " (do all ranks issue the same collectives with the same counts?)");
  if (h.chunks == 0 || h.index >= h.chunks)
    return Status(Code::kRemoteError, "multipath: malformed chunk from " + peer_.describe());
  op.re = Reassembly(h.total, h.chunks);
  op.started = true;
  if (!chunkFits(h, op.r->bytes, op.re))
    return Status(Code::kRemoteError, "multipath: malformed chunk from " + peer_.describe());
  return Status::ok();
}

Placement MultipathConnection::placeChunk(Lane& lane, const FrameHeader& h) {
  noteProgress();
  if (h.op >= nextRecvOp_) {  // its receive is not posted yet: keep it aside (bounded by the sender's cap)
    auto& list = early_[h.op];
    for (const Early& e : list)  // a copy still being read elsewhere does not stop this one (its lane may be dead)
      if (e.h.index == h.index && (e.complete || e.lane == &lane)) return Placement{};
    if (h.length > (uint64_t{1} << 32)) {
      fail(Status(Code::kRemoteError, "multipath: oversized chunk from " + peer_.describe()));
      return Placement{};
    }
    Early e;
    e.h = h;
    e.data = pool_.take();
    e.data.resize(static_cast<size_t>(h.length));
    e.lane = &lane;
    list.push_back(std::move(e));
    reading_[&lane] = Reading{h.op, h.index, true};
    return Placement{list.back().data.data(), false};
  }
  RecvOp* op = recvOp(h.op);
  if (!op || op->reported) return Placement{};  // an op already complete: a late duplicate
  Status s = startRecv(*op, h);
  if (!s.isOk()) {
    fail(std::move(s));
    return Placement{};
  }
  // A copy that another lane is still reading does not stop this one: both write the same bytes, the first
  // whole copy counts, and the other lane drops the rest of its own (its lane may be dead mid-chunk).
  if (op->re.seen(h.index)) return Placement{};
  op->claimed.push_back(h.index);
  reading_[&lane] = Reading{h.op, h.index, false};
  return Placement{static_cast<uint8_t*>(op->r->buf) + h.offset, false};
}

void MultipathConnection::ackOn(Lane* lane, const FrameHeader& data) {
  FrameHeader a;
  a.kind = FrameHeader::kAck;
  a.op = data.op;
  a.index = data.index;
  a.tag = data.tag;
  a.lane = data.lane;
  bool alive = false;
  for (auto& l : in_)
    if (l.get() == lane) alive = true;
  if (!alive) lane = in_.empty() ? nullptr : in_.front().get();
  if (lane) lane->postControl(a);
}

void MultipathConnection::finishArrival(RecvOp& op, uint32_t index) {
  std::erase(op.claimed, index);
  op.re.arrive(index);
  for (auto it = reading_.begin(); it != reading_.end();) {  // other lanes reading a copy of it drop the rest
    if (!it->second.early && it->second.op == op.op && it->second.index == index) {
      it->first->discardRest();
      it = reading_.erase(it);
    } else {
      ++it;
    }
  }
}

void MultipathConnection::oweSmallAck(Lane& lane, const FrameHeader& h) {
  if (lane.smallIn++ == lane.smallAckedIn) lane.smallOwedSince = Clock::now();
  lane.smallOwedBytes += h.length;
}

// One batch ack per incoming lane that owes one and whose batch is due.
void MultipathConnection::sendSmallAcks(bool all) {
  if (earlySmallBytes_ > kEarlySmallCap && !all) return;
  Clock::time_point now{};
  for (auto& l : in_) {
    if (l->bye || l->smallIn == l->smallAckedIn) continue;
    if (now == Clock::time_point{}) now = Clock::now();
    if (!all && l->smallIn - l->smallAckedIn < kSmallAckFrames && l->smallOwedBytes < kSmallAckBytes &&
        now - l->smallOwedSince < kSmallAckDelay)
      continue;
    FrameHeader a;
    a.kind = FrameHeader::kSmallAck;
    a.op = l->smallIn;
    l->postControl(a);
    l->smallAckedIn = l->smallIn;
    l->smallOwedBytes = 0;
  }
}

void MultipathConnection::chunkArrived(Lane& lane, const FrameHeader& h, bool placed) {
  noteProgress();
  auto rd = reading_.find(&lane);
  bool early = placed && rd != reading_.end() && rd->second.early;
  if (rd != reading_.end()) reading_.erase(rd);
  const bool small = h.kind == FrameHeader::kSmall;
  if (small) oweSmallAck(lane, h);  // every small frame counts on its lane, a duplicate too
  if (!placed) {
    if (small) return;
    // A duplicate of a chunk we hold is acknowledged again (its first ack may have been lost with its lane).
    // One that another lane is still reading is not: if that lane dies mid-chunk, the chunk must come again.
    if (h.op < nextRecvOp_) {
      RecvOp* op = recvOp(h.op);
      if (!op || op->reported || op->re.seen(h.index)) ackOn(&lane, h);
    }
    return;
  }
  if (early) {
    for (Early& e : early_[h.op])
      if (e.h.index == h.index && e.lane == &lane && !e.complete) {
        e.complete = true;
        break;
      }
    if (small) {
      earlySmallBytes_ += h.length;
    } else {
      FrameHeader held = h;
      held.kind = FrameHeader::kHeld;
      held.length = 0;
      lane.postControl(held);
    }
    if (RecvOp* op = recvOp(h.op)) {
      applyEarly(*op);
    } else if (h.op < nextRecvOp_) {  // a late copy of a chunk whose op is done meanwhile
      std::erase_if(early_[h.op], [&](const Early& e) { return e.h.index == h.index && e.lane == &lane; });
      if (early_[h.op].empty()) early_.erase(h.op);
      if (small)
        earlySmallBytes_ -= h.length;
      else
        ackOn(&lane, h);
    }
    return;
  }
  RecvOp* op = recvOp(h.op);
  if (!op) return;
  finishArrival(*op, h.index);
  if (!small) ackOn(&lane, h);
}

void MultipathConnection::applyEarly(RecvOp& op) {
  auto it = early_.find(op.op);
  if (it == early_.end()) return;
  auto& list = it->second;
  for (auto e = list.begin(); e != list.end();) {
    if (!e->complete) {
      ++e;
      continue;
    }
    Status s = startRecv(op, e->h);
    if (!s.isOk()) return fail(std::move(s));
    if (!op.re.seen(e->h.index)) {
      if (e->h.length) std::memcpy(static_cast<uint8_t*>(op.r->buf) + e->h.offset, e->data.data(), e->data.size());
      finishArrival(op, e->h.index);
    }
    if (e->h.kind == FrameHeader::kSmall)
      earlySmallBytes_ -= e->h.length;  // its batch ack was owed when it arrived
    else
      ackOn(e->lane, e->h);
    pool_.give(std::move(e->data));
    e = list.erase(e);
  }
  if (list.empty()) early_.erase(it);
}

void MultipathConnection::byeArrived(Lane& lane) {
  (void)lane;  // the lane marked itself (Lane::bye); pollLanes lets it go after its poll returns
}

// ---- send side -----------------------------------------------------------------------------------------

void MultipathConnection::smallAcked(int slot, uint64_t count) {
  if (slot < 0 || slot >= static_cast<int>(stats_.size())) return;
  SlotStats& st = stats_[static_cast<size_t>(slot)];
  while (!st.small.empty() && st.smallPosted - st.small.size() < count) {
    if (SendOp* s = sendOp(st.small.front().op)) {
      ++s->acked;
      smallUnacked_ -= s->total;
      st.smallBytes -= s->total;
      bytesAcked_ += s->total;
      st.bytes += s->total;
      ++chunksAcked_;
    }
    st.small.pop_front();
  }
  st.lastAck = Clock::now();
}

// A lost lane's unacknowledged small messages go back to the front of the queue, in order.
void MultipathConnection::requeueSmall(int slot) {
  SlotStats& st = stats_[static_cast<size_t>(slot)];
  for (auto it = st.small.rbegin(); it != st.small.rend(); ++it) {
    if (SendOp* s = sendOp(it->op)) smallUnacked_ -= s->total;
    smallQueue_.push_front(it->op);
  }
  st.smallPosted -= st.small.size();
  st.smallBytes = 0;
  st.small.clear();
}

// The lane the next small message goes on: of the open active lanes with room, the one with the fewest
// unacknowledged small bytes, the lowest position first (so a quiet link keeps to one lane, and a stream of
// small messages spreads over the path set); -1 when none has room.
int MultipathConnection::smallSlot() const {
  int best = -1;
  for (int slot = 0; slot < paths_.size(); ++slot) {
    const Path& p = paths_.path(slot);
    const Lane* l = out_[static_cast<size_t>(slot)].get();
    if (p.state != PathState::kActive || !l || !l->canPost()) continue;
    const SlotStats& st = stats_[static_cast<size_t>(slot)];
    if (best < 0) {
      best = slot;
      continue;
    }
    const SlotStats& b = stats_[static_cast<size_t>(best)];
    if (st.smallBytes < b.smallBytes || (st.smallBytes == b.smallBytes && p.position < paths_.path(best).position))
      best = slot;
  }
  return best;
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
    st.small.push_back(SmallSent{s->op, Clock::now()});
    st.smallBytes += s->total;
    ++st.smallPosted;
    smallQueue_.pop_front();
    l->flush();  // out now: a small message is latency, and the peer may be waiting on it
  }
}

void MultipathConnection::ackArrived(Lane& lane, const FrameHeader& h) {
  noteProgress();
  if (h.kind == FrameHeader::kSmallAck) return smallAcked(lane.slot, h.op);
  if (h.kind == FrameHeader::kHeld) {  // the path works; the chunk stays unacknowledged
    if (lane.slot >= 0 && lane.slot < static_cast<int>(stats_.size()))
      stats_[static_cast<size_t>(lane.slot)].lastHeld = Clock::now();
    return;
  }
  auto a = sched_.ack(lane.slot, ChunkRef{h.op, h.index});
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
  auto now = Clock::now();
  // The chunk's whole latency, queueing included: a path behind a congested spine shows it here, even
  // while its acks arrive back to back.
  double service = secondsBetween(a.sent, now);
  st.lastAck = now;
  st.bytes += a.bytes;
  st.roundBytes += a.bytes;
  st.roundService.push_back(service);
  st.latency.add(service);
  ++roundAcks_;
}

bool MultipathConnection::anyHolds(uint64_t op) const {
  for (const auto& l : out_)
    if (l && l->holds(op)) return true;
  return false;
}

Clock::duration MultipathConnection::dupAfter(int slot) const {
  const PathView* v = ctl_.view(slot);
  double s = v && v->samples > 0 ? v->service : 0.002;
  return std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(2 * s));
}

void MultipathConnection::feed() {
  feedSmall();
  if (sched_.idle()) return;  // no chunk queued or in flight: nothing to pull, nothing to duplicate
  auto now = Clock::now();
  // Lanes take turns at the head of the queue, so that no slot number is favoured.
  const int n = paths_.size();
  feedStart_ = n > 0 ? (feedStart_ + 1) % n : 0;
  for (int k = 0; k < n; ++k) {
    int slot = (feedStart_ + k) % n;
    Lane* l = out_[static_cast<size_t>(slot)].get();
    PathState st = paths_.path(slot).state;
    if (!l || (st != PathState::kActive && st != PathState::kSpare)) continue;
    while (l->canPost()) {
      auto c = sched_.pull(slot, now, dupAfter(slot));
      if (!c) break;
      SendOp* s = sendOp(c->op);
      if (!s) continue;  // cannot happen: chunks leave the scheduler before their op
      const ChunkSpan& span = s->chunks[c->index];
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
      l->postData(h, s->data + span.offset);
      s->posted = true;
    }
  }
}

void MultipathConnection::completeOps() {
  for (SendOp& s : sends_) {
    if (s.reported) continue;
    // A small message is done once on a lane (its staged copy is what is re-sent); a larger one once every
    // chunk is acknowledged and no lane still reads from the caller's buffer.
    bool done = s.total <= smallBytes() ? s.posted : s.acked == s.chunks.size() && !anyHolds(s.op);
    if (!done) continue;
    s.r->done = true;
    s.r = nullptr;
    s.reported = true;
    --pendingRequests_;
    --pendingSends_;
    noteProgress();
  }
  while (!sends_.empty() && sends_.front().reported && sends_.front().acked == sends_.front().chunks.size()) {
    pool_.give(std::move(sends_.front().staged));
    sends_.pop_front();
  }
  for (RecvOp& r : recvs_) {
    if (r.reported || !r.started || !r.re.complete() || !r.claimed.empty()) continue;
    r.r->done = true;
    r.r = nullptr;
    r.reported = true;
    --pendingRequests_;
    noteProgress();
  }
  while (!recvs_.empty() && recvs_.front().reported) recvs_.pop_front();
}

// ---- lanes ---------------------------------------------------------------------------------------------

Status MultipathConnection::openSlot(bool active, int position) {
  for (int attempt = 0; attempt < 16; ++attempt) {
    int slot = paths_.addPath(active);
    paths_.path(slot).position = position;
    out_.emplace_back();
    stats_.emplace_back();
    stats_.back().openedAt = Clock::now();
    auto lane = factory_->open(paths_.path(slot).port);
    if (!lane.isOk()) {
      paths_.path(slot).state = PathState::kClosed;
      return lane.takeStatus();
    }
    auto l = lane.take();
    if (!l) {  // the port is taken on this host
      paths_.markBusy(paths_.path(slot).port);
      paths_.path(slot).state = PathState::kClosed;
      continue;
    }
    l->slot = slot;
    out_.back() = std::move(l);
    return Status::ok();
  }
  return Status(Code::kSystemError, "multipath: no free source port toward " + peer_.describe());
}

Status MultipathConnection::openLanes() {
  auto now = Clock::now();
  if (now - lastOpenTry_ < kReopenBackoff) return Status::ok();
  // Lanes are opened, and replaced, only while this end has something to send: they carry our data alone
  // (our acks ride the peer's lanes). A peer that is done with us closes its end when it destroys the
  // communicator, and must not be taken for a failure; nor may one that only ever sent to us.
  if (pendingSends_ == 0 && sched_.idle() && smallQueue_.empty() && smallUnacked_ == 0) return Status::ok();
  std::vector<bool> held(static_cast<size_t>(o_.paths), false);
  int spares = 0;
  for (int i = 0; i < paths_.size(); ++i) {
    const Path& p = paths_.path(i);
    if (p.state == PathState::kClosed || p.state == PathState::kQuarantined || p.state == PathState::kDraining)
      continue;
    if (p.position >= 0 && p.position < o_.paths) held[static_cast<size_t>(p.position)] = true;
    if (p.position < 0) ++spares;
  }
  bool opened = false;
  for (int pos = 0; pos < o_.paths; ++pos) {
    if (held[static_cast<size_t>(pos)]) continue;
    MYR_TRY(openSlot(true, pos));
    opened = true;
  }
  for (; spares < paths_.wantSpares(); ++spares) {
    MYR_TRY(openSlot(false, -1));
    opened = true;
  }
  if (opened) lastOpenTry_ = now;
  return Status::ok();
}

Status MultipathConnection::adoptIncoming() {
  auto now = Clock::now();
  const int expected = o_.paths + (o_.adaptive ? o_.spares : 0);
  if (static_cast<int>(in_.size()) >= expected && now - lastAccept_ < kAcceptEvery) return Status::ok();
  lastAccept_ = now;
  while (true) {
    MYR_ASSIGN_OR_RETURN(auto lane, factory_->accept());
    if (!lane) return Status::ok();
    in_.push_back(std::move(lane));
    noteProgress();
  }
}

double MultipathConnection::openTimeoutSec() const {
  if (!everReady_) return kOpenTimeoutMaxSec;
  return std::clamp(8 * slowestOpenSec_, kOpenTimeoutMinSec, kOpenTimeoutMaxSec);
}

int MultipathConnection::readySpare() const {
  for (int i = 0; i < paths_.size(); ++i)
    if (paths_.path(i).state == PathState::kSpare) return i;
  return -1;
}

void MultipathConnection::promoteReady() {
  Clock::time_point now{};
  for (int slot = 0; slot < paths_.size(); ++slot) {
    Path& p = paths_.path(slot);
    Lane* l = out_[static_cast<size_t>(slot)].get();
    if (p.state != PathState::kOpening || !l) continue;
    if (now == Clock::time_point{}) now = Clock::now();
    if (!l->ready()) {
      if (secondsBetween(stats_[static_cast<size_t>(slot)].openedAt, now) > openTimeoutSec()) {
        MYR_LOG(kInfo, kNet, o_.rank,
                "multipath: path from port " + std::to_string(p.port) + " to " + peer_.describe() +
                    " did not open within " + std::to_string(openTimeoutSec()) + " s; another port");
        paths_.tabu(p.port);
        p.state = PathState::kClosed;
        out_[static_cast<size_t>(slot)].reset();
      }
      continue;
    }
    everReady_ = true;
    refusedInRow_ = 0;
    slowestOpenSec_ = std::max(slowestOpenSec_, secondsBetween(stats_[static_cast<size_t>(slot)].openedAt, now));
    p.state = p.position >= 0 ? PathState::kActive : PathState::kSpare;
    sched_.addLane(slot, p.state == PathState::kSpare);
    MYR_LOG(kInfo, kNet, o_.rank,
            std::string("multipath: ") + pathStateName(p.state) + " path " + std::to_string(slot) + " to " +
                peer_.describe() + " from port " + std::to_string(p.port));
  }
}

Status MultipathConnection::quarantine(int slot, const Status& why) {
  Path& p = paths_.path(slot);
  bool gone = factory_->peerGone(why);
  MYR_LOG(kInfo, kNet, o_.rank,
          "multipath: path " + std::to_string(slot) + " (port " + std::to_string(p.port) + ") to " + peer_.describe() +
              " quarantined: " + why.message());
  bool wasActive = p.state == PathState::kActive;
  int position = p.position;
  p.state = PathState::kQuarantined;
  p.position = -1;
  paths_.tabu(p.port);
  sched_.removeLane(slot);
  requeueSmall(slot);
  ctl_.forget(slot);
  out_[static_cast<size_t>(slot)].reset();
  ++quarantines_;
  // One refusal may be a port clash on this host; a peer that is gone refuses every port.
  refusedInRow_ = gone ? refusedInRow_ + 1 : 0;
  if (gone && refusedInRow_ >= 3) {
    bool anyLive = false;
    for (int i = 0; i < paths_.size(); ++i)
      anyLive = anyLive || (out_[static_cast<size_t>(i)] && paths_.path(i).state != PathState::kOpening);
    if (!anyLive)
      return Status(Code::kRemoteError,
                    why.message() + " (no path to " + peer_.describe() +
                        " is left: it refuses every port; did it exit or destroy the communicator?)");
  }
  if (wasActive && position >= 0) {
    int spare = readySpare();
    if (spare >= 0) {
      paths_.path(spare).state = PathState::kActive;
      paths_.path(spare).position = position;
      paths_.path(spare).repaths = p.repaths + 1;
      sched_.setScout(spare, false);
    }
  }
  return Status::ok();
}

// The spare that `slot`'s position should move to: the fastest one scouting has measured, else one not
// measured yet (a coin flip on most fabrics, no worse than staying). Measured spares no faster than `slot`
// itself sit behind the same bottleneck: they are re-rolled to fresh ports, and -1 says none is worth it.
int MultipathConnection::chooseSpare(int slot) {
  const PathView* bad = ctl_.view(slot);
  const double badService = bad && bad->samples >= 2 ? bad->service : 0;
  int best = -1, blind = -1;
  std::vector<std::pair<int, double>> behind;
  for (int i = 0; i < paths_.size(); ++i) {
    if (paths_.path(i).state != PathState::kSpare) continue;
    const PathView* v = ctl_.view(i);
    if (!v || v->samples < 2) {
      if (blind < 0) blind = i;
    } else if (badService > 0 && v->service * kSpareGain > badService) {
      behind.emplace_back(i, v->service);
    } else if (best < 0 || v->service < ctl_.view(best)->service) {
      best = i;
    }
  }
  for (auto [spare, service] : behind)
    reroll(spare, "no faster than path " + std::to_string(slot) + " it would replace (" +
                      std::to_string(service * 1e3) + " ms per chunk against " + std::to_string(badService * 1e3) +
                      ")");
  return best >= 0 ? best : blind;
}

void MultipathConnection::reroll(int spare, const std::string& why) {
  Path& s = paths_.path(spare);
  MYR_LOG(kInfo, kNet, o_.rank,
          "multipath: spare path " + std::to_string(spare) + " (port " + std::to_string(s.port) + ") toward " +
              peer_.describe() + " re-rolled: " + why);
  retire(spare);
  ++rerolls_;
}

// A path given up for another port: it drains (its queued chunks go back to the others), its port is tabu,
// and the control loop forgets its history.
void MultipathConnection::retire(int slot) {
  Path& p = paths_.path(slot);
  p.state = PathState::kDraining;
  p.position = -1;
  paths_.tabu(p.port);
  sched_.closeLane(slot);
  ctl_.forget(slot);
}

void MultipathConnection::repath(int slot) {
  Path& p = paths_.path(slot);
  int spare = p.state == PathState::kActive ? chooseSpare(slot) : -1;
  if (spare < 0) return ctl_.declined();
  Path& s = paths_.path(spare);
  MYR_LOG(kInfo, kNet, o_.rank,
          "multipath: re-path toward " + peer_.describe() + ": port " + std::to_string(p.port) + " -> " +
              std::to_string(s.port) + " (path " + std::to_string(slot) + " slow " + "for 3 rounds)");
  s.state = PathState::kActive;
  s.position = p.position;
  s.repaths = p.repaths + 1;
  sched_.setScout(spare, false);
  retire(slot);
  ++repaths_;
}

void MultipathConnection::closeDrained() {
  for (int slot = 0; slot < paths_.size(); ++slot) {
    Path& p = paths_.path(slot);
    auto& l = out_[static_cast<size_t>(slot)];
    if (p.state != PathState::kDraining || !l || sched_.laneChunks(slot) > 0 || !l->flushed() ||
        !stats_[static_cast<size_t>(slot)].small.empty())
      continue;
    FrameHeader bye;
    bye.kind = FrameHeader::kBye;
    l->postControl(bye);
    p.state = PathState::kClosed;
    sched_.removeLane(slot);
  }
  // Closed lanes whose bye has left are let go.
  for (int slot = 0; slot < paths_.size(); ++slot) {
    auto& l = out_[static_cast<size_t>(slot)];
    if (l && paths_.path(slot).state == PathState::kClosed && l->flushed()) l.reset();
  }
}

// Which lanes have something to do: output queued, bytes buffered, or a readable descriptor (one
// epoll_wait(2) over all of them; an idle lane would otherwise cost a recv() per poll, and a path set has ten
// or so). A lane without a descriptor yet, or any lane when epoll fails, is polled whole.
void MultipathConnection::findDueLanes() {
  const size_t nout = out_.size(), n = nout + in_.size();
  laneDue_.assign(n, false);
  laneReadable_.assign(n, false);
  auto laneAt = [&](size_t k) { return k < nout ? out_[k].get() : in_[k - nout].get(); };
  if (epoll_.get() < 0) epoll_ = Fd(epoll_create1(EPOLL_CLOEXEC));
  bool watching = false;
  for (size_t k = 0; k < n; ++k) {
    Lane* l = laneAt(k);
    if (!l) continue;
    int fd = l->fd();
    if (fd >= 0 && l->watchId == 0 && epoll_.get() >= 0) {
      epoll_event ev{};
      ev.events = EPOLLIN;
      ev.data.u64 = nextWatchId_;
      if (epoll_ctl(epoll_.get(), EPOLL_CTL_ADD, fd, &ev) == 0) l->watchId = nextWatchId_++;
    }
    if (fd < 0 || l->watchId == 0) {
      laneDue_[k] = laneReadable_[k] = true;
      continue;
    }
    watching = true;
    if (!l->flushed() || l->hasBufferedInput()) laneDue_[k] = true;
  }
  if (!watching) return;
  epoll_event ready[16];
  const int got = epoll_wait(epoll_.get(), ready, 16, 0);
  if (got < 0 || got == 16) {  // failed, or maybe more than we asked for: read every watched lane
    for (size_t k = 0; k < n; ++k)
      if (laneAt(k)) laneDue_[k] = laneReadable_[k] = true;
    return;
  }
  for (int e = 0; e < got; ++e)
    for (size_t k = 0; k < n; ++k)
      if (Lane* l = laneAt(k); l && l->watchId == ready[e].data.u64) {
        laneDue_[k] = laneReadable_[k] = true;
        break;
      }
}

Status MultipathConnection::pollLanes() {
  findDueLanes();
  const size_t nout = out_.size();
  for (int slot = 0; slot < static_cast<int>(nout); ++slot) {
    auto& l = out_[static_cast<size_t>(slot)];
    if (!l || !laneDue_[static_cast<size_t>(slot)]) continue;
    Status s = l->poll(*this, laneReadable_[static_cast<size_t>(slot)]);
    if (s.isOk()) continue;
    if (paths_.path(slot).state == PathState::kClosed) {
      l.reset();
      continue;
    }
    MYR_TRY(quarantine(slot, s));
  }
  // Our acks ride the incoming lanes back. One whose way back is dead swallows them (the sender's stack
  // still hears the peer's kernel ack its data, so it sees nothing wrong): let it go, so that the sender's
  // side of it stalls, is quarantined, and its chunks come again on a path that works both ways.
  auto now = Clock::now();
  bool checkBack = now - lastBackCheck_ >= kBackCheckEvery;
  if (checkBack) lastBackCheck_ = now;
  for (size_t i = 0; i < in_.size(); ++i) {
    auto& l = in_[i];
    const bool due = laneDue_[nout + i];
    if (!due && !checkBack) continue;
    Status s = due ? l->poll(*this, laneReadable_[nout + i]) : Status::ok();
    if (s.isOk() && l->bye) {
      l.reset();
      continue;
    }
    if (s.isOk() && checkBack && l->delivery() == Delivery::kStuck)
      s = Status(Code::kRemoteError, "our acknowledgements to " + peer_.describe() + " on the path from its port " +
                                         std::to_string(l->port()) + " are not acknowledged: its way back is dead");
    if (s.isOk()) continue;
    MYR_LOG(kInfo, kNet, o_.rank, "multipath: incoming path from " + peer_.describe() + " lost: " + s.message());
    auto rd = reading_.find(l.get());
    if (rd != reading_.end()) {  // the chunk it was reading will come again on another lane
      if (rd->second.early) {
        std::erase_if(early_[rd->second.op], [&](const Early& e) {
          return e.h.index == rd->second.index && e.lane == l.get() && !e.complete;
        });
      } else if (RecvOp* op = recvOp(rd->second.op)) {
        std::erase(op->claimed, rd->second.index);
      }
      reading_.erase(rd);
    }
    for (auto& [op, list] : early_)
      for (Early& e : list)
        if (e.lane == l.get()) e.lane = nullptr;
    l.reset();
    incomingLost_ = Clock::now();
  }
  std::erase(in_, nullptr);
  return fatal_;
}

void MultipathConnection::checkStalls() {
  if (!o_.adaptive) return;
  auto now = Clock::now();
  if (now - lastStallCheck_ < kStallCheckEvery) return;
  lastStallCheck_ = now;
  for (int slot = 0; slot < paths_.size(); ++slot) {
    PathState st = paths_.path(slot).state;
    if (st != PathState::kActive && st != PathState::kSpare && st != PathState::kDraining) continue;
    Lane* lane = out_[static_cast<size_t>(slot)].get();
    const auto& small = stats_[static_cast<size_t>(slot)].small;
    // Small messages are acknowledged within a millisecond or so; one unacknowledged for the stall time on a
    // lane whose stack hears nothing from the peer's is lost with the lane.
    if (!small.empty() && lane && secondsBetween(small.front().at, now) >= ctl_.params().stallMinSec &&
        lane->delivery() == Delivery::kStuck) {
      Status s = quarantine(slot, Status(Code::kRemoteError, "the transport hears no acknowledgement from the peer"));
      if (!s.isOk()) fail(std::move(s));
      continue;
    }
    auto oldest = sched_.oldestOn(slot);
    if (!oldest) continue;
    // The service clock of a lane starts at its last ack, not when its queue filled.
    const SlotStats& ss = stats_[static_cast<size_t>(slot)];
    auto since = std::max({*oldest, ss.lastAck, ss.lastHeld});
    if (secondsBetween(since, now) < ctl_.params().stallMinSec) continue;
    // A path whose stack hears no ack from the peer's is dead now. One whose stack is fine may still have
    // lost our chunks (the receiver let its end go because its way back was dead): the rules below, on our
    // acks and the receiver's "held" notes, catch that.
    if (lane && lane->delivery() == Delivery::kStuck) {
      Status s = quarantine(slot, Status(Code::kRemoteError, "the transport hears no acknowledgement from the peer"));
      if (!s.isOk()) fail(std::move(s));
      continue;
    }
    bool siblingsMove = false;  // a peer that is merely slow to post its receives stalls every lane alike
    for (int other = 0; other < paths_.size(); ++other)
      siblingsMove = siblingsMove || (other != slot && stats_[static_cast<size_t>(other)].lastAck > since);
    double age = secondsBetween(since, now);
    // Alone, a lane is given longer: every path may be dead, or the whole peer slow.
    if (siblingsMove ? !ctl_.stalled(slot, age) : age < kLoneStallSec) continue;
    Status s = quarantine(slot, Status(Code::kRemoteError, "no acknowledgement for " + std::to_string(age) + " s" +
                                                               (siblingsMove ? " while its siblings move" : "")));
    if (!s.isOk()) fail(std::move(s));
  }
}

void MultipathConnection::maybeRound() {
  int actives = paths_.count(PathState::kActive);
  if (actives == 0 || roundAcks_ < kRoundAcksPerPath * actives) return;
  auto now = Clock::now();
  double secs = secondsBetween(roundStart_, now);
  roundStart_ = now;
  roundAcks_ = 0;
  std::vector<PathRound> rounds;
  for (int slot = 0; slot < paths_.size(); ++slot) {
    PathState st = paths_.path(slot).state;
    SlotStats& s = stats_[static_cast<size_t>(slot)];
    if (st == PathState::kActive || st == PathState::kSpare) {
      PathRound r;
      r.slot = slot;
      r.active = st == PathState::kActive;
      r.bytes = s.roundBytes;
      r.serviceSec = std::move(s.roundService);
      rounds.push_back(std::move(r));
    }
    s.roundBytes = 0;
    s.roundService.clear();
  }
  if (o_.adaptive) {
    int slot = ctl_.round(rounds, secs);
    if (slot >= 0) repath(slot);
  } else {
    (void)ctl_.round(rounds, secs);  // measurements only: telemetry
  }
  publishTelemetry(telemetry());
  if (logEnabled(LogLevel::kTrace, Subsys::kNet)) MYR_LOG(kTrace, kNet, o_.rank, formatTelemetry({telemetry()}));
}

PeerTelemetry MultipathConnection::telemetry() const {
  PeerTelemetry t;
  t.transport = "tcp";
  t.comm = o_.commTag;
  t.rank = o_.rank;
  t.peer = peer_.rank;
  t.bytes = bytesAcked_;
  t.chunks = chunksAcked_;
  t.duplicates = sched_.duplicates();
  t.quarantines = quarantines_;
  t.repaths = repaths_;
  t.rerolls = rerolls_;
  t.rounds = ctl_.rounds();
  t.throughput = ctl_.peerThroughput();
  t.adaptive = o_.adaptive;
  for (int slot = 0; slot < paths_.size(); ++slot) {
    const Path& p = paths_.path(slot);
    const SlotStats& s = stats_[static_cast<size_t>(slot)];
    if (p.state == PathState::kClosed && s.bytes == 0) continue;
    t.paths.push_back(describePath(slot, p, s.bytes, ctl_.view(slot), s.latency));
  }
  return t;
}

std::string MultipathConnection::describe() const {
  const PeerTelemetry t = telemetry();
  std::string out = "tcp multipath to " + peer_.describe() + ": " + std::to_string(t.paths.size()) +
                    " paths, bytes acknowledged by source port:";
  for (const PathTelemetry& p : t.paths) out += " " + std::to_string(p.port) + "=" + std::to_string(p.bytes);
  return out;
}

// ---- the loop ------------------------------------------------------------------------------------------

Status MultipathConnection::poll() {
  MYR_TRY(fatal_);
  MYR_TRY(adoptIncoming());
  MYR_TRY(openLanes());
  promoteReady();
  feed();
  MYR_TRY(pollLanes());
  promoteReady();
  feed();
  checkStalls();
  maybeRound();
  closeDrained();
  completeOps();
  sendSmallAcks();
  // Acks queued by this poll leave now: the peer's send may wait on them after our receive is done.
  for (auto& l : in_)
    if (!l->bye && !l->flushed()) l->flush();
  return fatal_;
}

bool MultipathConnection::hasBackgroundWork() const {
  if (!sched_.idle() || !in_.empty() || !smallQueue_.empty() || smallUnacked_ > 0) return true;
  return incomingLost_ != Clock::time_point{} && secondsBetween(incomingLost_, Clock::now()) < kAwaitReplacementSec;
}

Status MultipathConnection::checkAlive() {
  MYR_TRY(fatal_);
  bool waitingForData = false;
  for (const RecvOp& r : recvs_) waitingForData = waitingForData || !r.reported;
  if (waitingForData && in_.empty() && incomingLost_ != Clock::time_point{} &&
      secondsBetween(incomingLost_, Clock::now()) > kIncomingLostSec)
    return Status(Code::kRemoteError, "tcp: connection to " + peer_.describe() +
                                          ": every path was closed by the peer (did it exit or fail?)");
  return Status::ok();
}

void MultipathConnection::drain(Clock::time_point deadline) {
  // The peer's small messages are acknowledged now: it may still hold them for us, and will not hear from
  // this end again.
  sendSmallAcks(true);
  while (Clock::now() < deadline && fatal_.isOk()) {
    bool pending = !sched_.idle() || !smallQueue_.empty() || smallUnacked_ > 0;
    for (const auto& l : out_)
      if (l && !l->flushed()) pending = true;
    for (const auto& l : in_)
      if (!l->flushed()) pending = true;
    if (!pending) return;
    if (!poll().isOk()) return;
  }
}

}  // namespace myriad::mp
