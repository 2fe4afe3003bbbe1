// MultipathConnection (see multipath_connection.h): the receive side: chunks placed in their receive or held early
// until it is posted, acks per chunk and in batches per lane for small messages.
#include <cstring>

#include "transports/multipath/multipath_connection.h"

namespace myriad::mp {

Status MultipathConnection::remoteError(const std::string& what, const Lane* lane) const {
  std::string where = " from " + peer_.describe();
  if (lane) where += " (path from its port " + std::to_string(lane->port()) + ")";
  return Status(Code::kRemoteError, o_.transport + " multipath: " + what + where);
}

Status MultipathConnection::startRecv(RecvOp& op, const FrameHeader& h, const Lane* lane) {
  if (op.started) {
    if (!chunkFits(h, op.r->bytes, op.re)) return remoteError("malformed chunk", lane);
    return Status::ok();
  }
  if (h.tag != op.r->tag || h.total != op.r->bytes)
    return Status(Code::kInvalidUsage,
                  o_.transport + ": message from " + peer_.describe() + " does not match this rank's call: got " +
                      std::to_string(h.total) + " bytes with tag " + std::to_string(h.tag) + ", expected " +
                      std::to_string(op.r->bytes) + " bytes with tag " + std::to_string(op.r->tag) +
                      " (do all ranks issue the same collectives with the same counts?)");
  if (h.chunks == 0 || h.index >= h.chunks) return remoteError("malformed chunk", lane);
  op.re = Reassembly(h.total, h.chunks);
  op.started = true;
  if (!chunkFits(h, op.r->bytes, op.re)) return remoteError("malformed chunk", lane);
  return Status::ok();
}

Placement MultipathConnection::placeChunk(Lane& lane, const FrameHeader& h) {
  noteProgress(now_);
  if (h.op >= nextRecvOp_) {  // its receive is not posted yet: keep it aside (bounded by the sender's cap)
    auto& list = early_[h.op];
    for (const Early& e : list)  // a copy still being read elsewhere does not stop this one (its lane may be dead)
      if (e.h.index == h.index && (e.complete || e.lane == &lane)) return Placement{};
    if (h.length > (uint64_t{1} << 32)) {
      fail(remoteError("oversized chunk of " + std::to_string(h.length) + " bytes", &lane));
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
  Status s = startRecv(*op, h, &lane);
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

void MultipathConnection::oweAck(Lane* lane, const FrameHeader& data) {
  owedAcks_.push_back(ackOf(data));
  if (lane) ackLane_ = lane;
}

// A poll's acks leave in one write: on the lane the last chunk came in on, if it still lives, else on any.
// The reverse direction of a lane is a path of its own (its own ECMP hash), so carrying every lane's acks
// on one changes what each ack measures no more than carrying each on its own did.
void MultipathConnection::sendAcks() {
  if (owedAcks_.empty()) return;
  Lane* lane = nullptr;
  for (auto& l : in_)
    if (!l->bye && (l.get() == ackLane_ || !lane)) lane = l.get();
  if (lane)
    for (const FrameHeader& a : owedAcks_) lane->postControl(a);
  owedAcks_.clear();
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
  if (lane.smallIn++ == lane.smallAckedIn) lane.smallOwedSince = now_;
  lane.smallOwedBytes += h.length;
}

// One batch ack per incoming lane that owes one and whose batch is due.
void MultipathConnection::sendSmallAcks(bool all) {
  if (earlySmallBytes_ > kEarlySmallCap && !all) return;
  const Clock::time_point now = now_;
  for (auto& l : in_) {
    if (l->bye || l->smallIn == l->smallAckedIn) continue;
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
  noteProgress(now_);
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
      if (!op || op->reported || op->re.seen(h.index)) oweAck(&lane, h);
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
        oweAck(&lane, h);
    }
    return;
  }
  RecvOp* op = recvOp(h.op);
  if (!op) return;
  finishArrival(*op, h.index);
  if (!small) oweAck(&lane, h);
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
    Status s = startRecv(op, e->h, e->lane);
    if (!s.isOk()) return fail(std::move(s));
    if (!op.re.seen(e->h.index)) {
      if (e->h.length) std::memcpy(static_cast<uint8_t*>(op.r->buf) + e->h.offset, e->data.data(), e->data.size());
      finishArrival(op, e->h.index);
    }
    if (e->h.kind == FrameHeader::kSmall)
      earlySmallBytes_ -= e->h.length;  // its batch ack was owed when it arrived
    else
      oweAck(e->lane, e->h);
    pool_.give(std::move(e->data));
    e = list.erase(e);
  }
  if (list.empty()) early_.erase(it);
}

void MultipathConnection::byeArrived(Lane& lane) {
  (void)lane;  // the lane marked itself (Lane::bye); pollLanes lets it go after its poll returns
}

}  // namespace myriad::mp
