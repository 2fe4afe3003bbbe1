// MultipathConnection (see multipath_connection.h): posting, completion, the poll loop, telemetry. The
// receive side is in multipath_receive.cc, the send side in multipath_send.cc, lane upkeep in
// multipath_lanes.cc.
#include "transports/multipath/multipath_connection.h"

#include <algorithm>

#include "base/log.h"

namespace myriad::mp {
namespace {
constexpr int kRoundAcksPerPath = 8;  // a round of the control loop: this many acks per active path
constexpr double kIncomingLostSec = 2.0;
constexpr double kAwaitReplacementSec = 10.0;

// Bytes in flight on one active lane: twice its even share of the peer's cap, at least a chunk.
uint64_t laneCap(const MultipathOptions& o) {
  return std::max<uint64_t>(o.chunkBytes, 2 * o.inflightBytes / static_cast<uint64_t>(o.paths));
}
}  // namespace

MultipathConnection::MultipathConnection(const PeerInfo& peer, MultipathOptions o, std::unique_ptr<LaneFactory> factory)
    : Connection(peer),
      o_(std::move(o)),
      factory_(std::move(factory)),
      keeper_(PathKeeperOptions{o_.paths, o_.adaptive ? o_.spares : 0, o_.ports, o_.seed, o_.control, kRoundAcksPerPath,
                                o_.adaptive, true}),
      sched_(SchedulerLimits{o_.inflightBytes, laneCap(o_), 1, o_.adaptive}),
      coupled_(CoupledParams{.ceiling = laneCap(o_)}) {}

MultipathConnection::~MultipathConnection() {
  forgetTelemetry(o_.commTag, peer_.rank);
}

void MultipathConnection::fail(Status s) {
  if (fatal_.isOk()) fatal_ = std::move(s);
}

// ---- posting -------------------------------------------------------------------------------------------

Status MultipathConnection::postSend(Request* r) {
  if (!busy()) noteProgress();
  if (!everReady_) lastUpkeep_ = {};  // the first lanes open at the next poll, not an upkeep period later
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

// Sends wait in sends_ until acknowledged, long after they are reported done (small ones are done at once,
// acknowledged in batches): the scans stop once every unreported op has been looked at.
void MultipathConnection::completeOps() {
  int unreported = pendingSends_;
  for (auto it = sends_.begin(); unreported > 0 && it != sends_.end(); ++it) {
    SendOp& s = *it;
    if (s.reported) continue;
    --unreported;
    // A small message is done once on a lane (its staged copy is what is re-sent); a larger one once every
    // chunk is acknowledged and no lane still reads from the caller's buffer.
    bool done = s.total <= smallBytes() ? s.posted : s.acked == s.chunks.size() && !anyHolds(s.op);
    if (!done) continue;
    s.r->done = true;
    s.r = nullptr;
    s.reported = true;
    --pendingRequests_;
    --pendingSends_;
    noteProgress(now_);
  }
  while (!sends_.empty() && sends_.front().reported && sends_.front().acked == sends_.front().chunks.size()) {
    pool_.give(std::move(sends_.front().staged));
    sends_.pop_front();
  }
  unreported = pendingRequests_ - pendingSends_;
  for (auto it = recvs_.begin(); unreported > 0 && it != recvs_.end(); ++it) {
    RecvOp& r = *it;
    if (r.reported) continue;
    --unreported;
    if (!r.started || !r.re.complete() || !r.claimed.empty()) continue;
    r.r->done = true;
    r.r = nullptr;
    r.reported = true;
    --pendingRequests_;
    noteProgress(now_);
  }
  while (!recvs_.empty() && recvs_.front().reported) recvs_.pop_front();
}

PeerTelemetry MultipathConnection::telemetry() const {
  PeerTelemetry t;
  t.transport = o_.transport;
  t.comm = o_.commTag;
  t.rank = o_.rank;
  t.peer = peer_.rank;
  t.bytes = bytesAcked_;
  t.chunks = chunksAcked_;
  t.duplicates = sched_.duplicates();
  t.quarantines = quarantines_;
  t.repaths = repaths_;
  t.rerolls = rerolls_;
  t.rerollDecisions = rerollDecisions_;
  keeper_.describe(&t, true);
  t.losses = coupled_.losses();
  for (PathTelemetry& p : t.paths)
    if (coupled_.has(p.slot)) p.window = coupled_.window(p.slot);
  t.adaptive = o_.adaptive;
  t.stoodDown = stoodDown_;
  return t;
}

std::string MultipathConnection::describe() const {
  const PeerTelemetry t = telemetry();
  std::string out = o_.transport + " multipath to " + peer_.describe() + ": " + std::to_string(t.paths.size()) +
                    " paths, bytes acknowledged by source port:";
  for (const PathTelemetry& p : t.paths) out += " " + std::to_string(p.port) + "=" + std::to_string(p.bytes);
  return out;
}

// ---- the loop ------------------------------------------------------------------------------------------

// Every poll moves bytes (feed, the lanes' I/O, completions, small acks); lane upkeep (adopting and opening
// lanes, promoting open ones, letting drained ones go) runs while lanes open and otherwise every
// kUpkeepEvery: a poll that only finds a small message costs about what a plain connection's does.
Status MultipathConnection::poll() {
  MYR_TRY(fatal_);
  now_ = Clock::now();
  const bool upkeep = lanesOpening_ || now_ - lastUpkeep_ >= kUpkeepEvery;
  if (upkeep) {
    lastUpkeep_ = now_;
    MYR_TRY(adoptIncoming());
    MYR_TRY(openLanes());
    promoteReady();
  }
  feed();
  MYR_TRY(pollLanes());
  now_ = Clock::now();
  if (lanesOpening_) promoteReady();
  feed();
  checkStalls();
  maybeRound();
  if (upkeep) closeDrained();
  completeOps();
  sendSmallAcks();
  sendAcks();
  // Acks queued by this poll leave now: the peer's send may wait on them after our receive is done.
  for (auto& l : in_)
    if (!l->bye && !l->flushed()) l->flush();
  return fatal_;
}

bool MultipathConnection::hasBackgroundWork() const {
  if (!sched_.idle() || !in_.empty() || !smallQueue_.empty() || smallUnackedFrames_ > 0) return true;
  return incomingLost_ != Clock::time_point{} && secondsBetween(incomingLost_, Clock::now()) < kAwaitReplacementSec;
}

Status MultipathConnection::checkAlive() {
  MYR_TRY(fatal_);
  bool waitingForData = false;
  for (const RecvOp& r : recvs_) waitingForData = waitingForData || !r.reported;
  if (waitingForData && in_.empty() && incomingLost_ != Clock::time_point{} &&
      secondsBetween(incomingLost_, Clock::now()) > kIncomingLostSec)
    return Status(Code::kRemoteError, o_.transport + ": connection to " + peer_.describe() +
                                          ": every path was closed by the peer (did it exit or fail?)");
  return Status::ok();
}

bool MultipathConnection::drainStep() {
  if (!fatal_.isOk()) return true;
  // The peer's small messages are acknowledged at once: it may still hold them for us, and will not hear
  // from this end again.
  sendSmallAcks(true);
  bool pending = !sched_.idle() || !smallQueue_.empty() || smallUnackedFrames_ > 0;
  for (const auto& l : out_)
    if (l && !l->flushed()) pending = true;
  for (const auto& l : in_)
    if (!l->flushed()) pending = true;
  return !pending || !poll().isOk();
}

}  // namespace myriad::mp
