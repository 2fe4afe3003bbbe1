// MultipathConnection (see multipath_connection.h): lane upkeep: opening and adopting lanes, quarantine, re-paths and
// re-rolls, draining, which lanes to poll, stalls, rounds.
#include <sys/epoll.h>

#include <algorithm>

#include "base/log.h"
#include "transports/multipath/multipath_connection.h"

namespace myriad::mp {
namespace {
constexpr double kSpareGain = 1.25;  // a spare is worth moving to when its chunks are served this much faster
// A lane that has not opened by then is given up for another port (its SYN may hash onto a dead spine):
// 8x the slowest open seen toward this peer, within [0.2 s, 1 s]; 3 s until one has opened, past the
// kernel's first SYN retransmission (1 s): at 1 s, a SYN lost at start gave up a pinned port at the very
// moment its retry went out (net_flat: a preset port replaced by a random one, once in six runs).
constexpr double kOpenTimeoutMinSec = 0.2, kOpenTimeoutMaxSec = 1.0, kFirstOpenTimeoutSec = 3.0;
constexpr auto kReopenBackoff = std::chrono::milliseconds(20);
constexpr auto kBackCheckEvery = std::chrono::milliseconds(100);
constexpr double kLoneStallSec = 3.0;
// Stalls are judged against 0.25 s and more (ControlParams::stallMinSec): a look every 10 ms is plenty, and
// keeps the per-lane scans out of every poll.
constexpr auto kStallCheckEvery = std::chrono::milliseconds(10);
// Once the peer's lanes are all here, the listener is asked for a new one (a re-path's) this often, not on
// every poll: an accept(2) that finds nothing costs a system call per poll.
constexpr auto kAcceptEvery = std::chrono::milliseconds(5);
// MYRIAD_NET_PATHS=auto stands down after this many rounds, and this long, in which every path measured
// alike (a round is 8 acknowledged chunks per active path: 32 rounds of 4 paths are 64 MiB of 64 KiB chunks).
constexpr int kCalmRounds = 32;
constexpr double kCalmSec = 2.0;
// Stood down, a path set stands up again when the control loop names a path slow twice within this many
// rounds (its hold-down after a verdict is 6 rounds, so a path that stays behind is named again in time).
constexpr int kStandUpWindowRounds = 24;
}  // namespace

Status MultipathConnection::openSlot(bool active, int position) {
  for (int attempt = 0; attempt < 16; ++attempt) {
    int slot = paths().addPath(active);
    paths().path(slot).position = position;
    out_.emplace_back();
    stats_.emplace_back();
    stats_.back().openedAt = now_;
    auto lane = factory_->open(paths().path(slot).port);
    if (!lane.isOk()) {
      paths().path(slot).state = PathState::kClosed;
      return lane.takeStatus();
    }
    auto l = lane.take();
    if (!l) {  // the port is taken on this host
      paths().markBusy(paths().path(slot).port);
      paths().path(slot).state = PathState::kClosed;
      continue;
    }
    l->slot = slot;
    out_.back() = std::move(l);
    lanesOpening_ = true;
    return Status::ok();
  }
  return Status(Code::kSystemError, o_.transport + " multipath: no free source port toward " + peer_.describe());
}

Status MultipathConnection::openLanes() {
  auto now = now_;
  if (now - lastOpenTry_ < kReopenBackoff) return Status::ok();
  // Lanes are opened, and replaced, only while this end has something to send: they carry our data alone
  // (our acks ride the peer's lanes). A peer that is done with us closes its end when it destroys the
  // communicator, and must not be taken for a failure; nor may one that only ever sent to us.
  if (pendingSends_ == 0 && sched_.idle() && smallQueue_.empty() && smallUnackedFrames_ == 0) return Status::ok();
  std::vector<bool> held(static_cast<size_t>(o_.paths), false);
  int spares = 0;
  for (int i = 0; i < paths().size(); ++i) {
    const Path& p = paths().path(i);
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
  for (; !stoodDown_ && spares < paths().wantSpares(); ++spares) {
    MYR_TRY(openSlot(false, -1));
    opened = true;
  }
  if (opened) lastOpenTry_ = now;
  return Status::ok();
}

Status MultipathConnection::adoptIncoming() {
  auto now = now_;
  const int expected = o_.paths;  // the peer's active lanes; its spares may be closed (stood down)
  if (static_cast<int>(in_.size()) >= expected && now - lastAccept_ < kAcceptEvery) return Status::ok();
  lastAccept_ = now;
  while (true) {
    MYR_ASSIGN_OR_RETURN(auto lane, factory_->accept());
    if (!lane) return Status::ok();
    in_.push_back(std::move(lane));
    noteProgress(now_);
  }
}

double MultipathConnection::openTimeoutSec() const {
  if (!everReady_) return kFirstOpenTimeoutSec;
  return std::clamp(8 * slowestOpenSec_, kOpenTimeoutMinSec, kOpenTimeoutMaxSec);
}

int MultipathConnection::readySpare() const {
  for (int i = 0; i < paths().size(); ++i)
    if (paths().path(i).state == PathState::kSpare) return i;
  return -1;
}

void MultipathConnection::promoteReady() {
  const Clock::time_point now = now_;
  lanesOpening_ = false;
  for (int slot = 0; slot < paths().size(); ++slot) {
    Path& p = paths().path(slot);
    Lane* l = out_[static_cast<size_t>(slot)].get();
    if (p.state != PathState::kOpening || !l) continue;
    if (!l->ready()) {
      lanesOpening_ = true;
      if (secondsBetween(stats_[static_cast<size_t>(slot)].openedAt, now) > openTimeoutSec()) {
        MYR_LOG(kInfo, kNet, o_.rank,
                o_.transport + " multipath: path from port " + std::to_string(p.port) + " to " + peer_.describe() +
                    " did not open within " + std::to_string(openTimeoutSec()) + " s; another port");
        paths().tabu(p.port);
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
    if (stoodDown_ && p.state == PathState::kSpare) {
      retire(slot);
      continue;
    }
    MYR_LOG(kInfo, kNet, o_.rank,
            std::string(o_.transport + " multipath: ") + pathStateName(p.state) + " path " + std::to_string(slot) +
                " to " + peer_.describe() + " from port " + std::to_string(p.port));
  }
}

Status MultipathConnection::quarantine(int slot, const Status& why) {
  Path& p = paths().path(slot);
  bool gone = factory_->peerGone(why);
  MYR_LOG(kInfo, kNet, o_.rank,
          o_.transport + " multipath: path " + std::to_string(slot) + " (port " + std::to_string(p.port) + ") to " +
              peer_.describe() + " quarantined: " + why.message());
  bool wasActive = p.state == PathState::kActive;
  int position = p.position;
  p.state = PathState::kQuarantined;
  p.position = -1;
  paths().tabu(p.port);
  sched_.removeLane(slot);
  uncouple(slot);
  requeueSmall(slot);
  keeper_.control().forget(slot);
  out_[static_cast<size_t>(slot)].reset();
  ++quarantines_;
  // One refusal may be a port clash on this host; a peer that is gone refuses every port.
  refusedInRow_ = gone ? refusedInRow_ + 1 : 0;
  if (gone && refusedInRow_ >= 3) {
    bool anyLive = false;
    for (int i = 0; i < paths().size(); ++i)
      anyLive = anyLive || (out_[static_cast<size_t>(i)] && paths().path(i).state != PathState::kOpening);
    if (!anyLive)
      return Status(Code::kRemoteError,
                    why.message() + " (no path to " + peer_.describe() +
                        " is left: it refuses every port; did it exit or destroy the communicator?)");
  }
  if (wasActive && position >= 0) {
    int spare = readySpare();
    if (spare >= 0) {
      paths().path(spare).state = PathState::kActive;
      paths().path(spare).position = position;
      paths().path(spare).repaths = p.repaths + 1;
      sched_.setScout(spare, false);
    }
  }
  return Status::ok();
}

void MultipathConnection::reroll(int spare, const std::string& why) {
  Path& s = paths().path(spare);
  MYR_LOG(kInfo, kNet, o_.rank,
          o_.transport + " multipath: spare path " + std::to_string(spare) + " (port " + std::to_string(s.port) +
              ") toward " + peer_.describe() + " re-rolled: " + why);
  retire(spare);
  ++rerolls_;
}

// A path given up for another port: it drains (its queued chunks go back to the others), its port is tabu,
// and the control loop forgets its history.
void MultipathConnection::retire(int slot) {
  Path& p = paths().path(slot);
  p.state = PathState::kDraining;
  p.position = -1;
  paths().tabu(p.port);
  sched_.closeLane(slot);
  uncouple(slot);
  keeper_.control().forget(slot);
}

void MultipathConnection::repath(int slot) {
  Path& p = paths().path(slot);
  if (p.state != PathState::kActive) return keeper_.control().declined();
  const SpareChoice c = keeper_.chooseSpare(slot, kSpareGain);
  for (auto [spare, service] : c.behind)
    reroll(spare, "no faster than path " + std::to_string(slot) + " it would replace (" +
                      std::to_string(service * 1e3) + " ms per chunk against " + std::to_string(c.slowService * 1e3) +
                      ")");
  if (!c.behind.empty()) ++rerollDecisions_;
  const int spare = c.take;
  if (spare < 0) return keeper_.control().declined();
  Path& s = paths().path(spare);
  MYR_LOG(kInfo, kNet, o_.rank,
          o_.transport + " multipath: re-path toward " + peer_.describe() + ": port " + std::to_string(p.port) +
              " -> " + std::to_string(s.port) + " (path " + std::to_string(slot) + " slow " + "for 3 rounds)");
  s.state = PathState::kActive;
  s.position = p.position;
  s.repaths = p.repaths + 1;
  sched_.setScout(spare, false);
  retire(slot);
  ++repaths_;
}

void MultipathConnection::closeDrained() {
  for (int slot = 0; slot < paths().size(); ++slot) {
    Path& p = paths().path(slot);
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
  for (int slot = 0; slot < paths().size(); ++slot) {
    auto& l = out_[static_cast<size_t>(slot)];
    if (l && paths().path(slot).state == PathState::kClosed && l->flushed()) l.reset();
  }
}

// Which lanes have something to do: output queued, bytes buffered, or a readable descriptor (one
// epoll_wait(2) over all of them; an idle lane would otherwise cost a recv() per poll, and a path set has ten
// or so). A lane without a descriptor yet, or any lane when epoll fails, is polled whole.
void MultipathConnection::findDueLanes() {
  const size_t nout = out_.size(), n = nout + in_.size();
  laneDue_.assign(n, false);
  laneReadable_.assign(n, false);
  watchIds_.assign(n, 0);
  if (epoll_.get() < 0) epoll_ = Fd(epoll_create1(EPOLL_CLOEXEC));
  bool watching = false;
  for (size_t k = 0; k < n; ++k) {
    Lane* l = k < nout ? out_[k].get() : in_[k - nout].get();
    if (!l) continue;
    const int fd = l->fd();  // -1 also once the lane has an error to report: polled whole, it reports it
    if (fd >= 0 && l->watchId == 0 && epoll_.get() >= 0) {  // a closed lane's descriptor leaves the set by itself
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
    watchIds_[k] = l->watchId;
    if (!l->flushed() || l->hasBufferedInput()) laneDue_[k] = true;
  }
  if (!watching) return;
  epoll_event ready[16];
  const int got = epoll_wait(epoll_.get(), ready, 16, 0);
  if (got < 0 || got == 16) {  // failed, or maybe more than we asked for: read every watched lane
    for (size_t k = 0; k < n; ++k)
      if (watchIds_[k] != 0) laneDue_[k] = laneReadable_[k] = true;
    return;
  }
  for (int e = 0; e < got; ++e) {
    auto it = std::find(watchIds_.begin(), watchIds_.end(), ready[e].data.u64);
    if (it == watchIds_.end()) continue;
    const auto k = static_cast<size_t>(it - watchIds_.begin());
    laneDue_[k] = laneReadable_[k] = true;
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
    if (paths().path(slot).state == PathState::kClosed) {
      l.reset();
      continue;
    }
    MYR_TRY(quarantine(slot, s));
  }
  // Our acks ride the incoming lanes back (a poll's on one of them). One whose way back is dead swallows them
  // (the sender's stack still hears the peer's kernel ack its data, so it sees nothing wrong): let it go, so
  // that the sender's side of it stalls, is quarantined, and its chunks come again on a path that works both
  // ways; chunks of other lanes whose acks it swallowed are sent again at the end game and acknowledged again.
  auto now = now_;
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
    MYR_LOG(kInfo, kNet, o_.rank,
            o_.transport + " multipath: incoming path from " + peer_.describe() + " lost: " + s.message());
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
    incomingLost_ = now_;
  }
  std::erase(in_, nullptr);
  return fatal_;
}

void MultipathConnection::checkStalls() {
  if (!o_.adaptive) return;
  auto now = now_;
  if (now - lastStallCheck_ < kStallCheckEvery) return;
  lastStallCheck_ = now;
  for (int slot = 0; slot < paths().size(); ++slot) {
    PathState st = paths().path(slot).state;
    if (st != PathState::kActive && st != PathState::kSpare && st != PathState::kDraining) continue;
    Lane* lane = out_[static_cast<size_t>(slot)].get();
    const auto& small = stats_[static_cast<size_t>(slot)].small;
    // Small messages are acknowledged within a millisecond or so; one unacknowledged for the stall time on a
    // lane whose stack hears nothing from the peer's is lost with the lane.
    if (!small.empty() && lane && secondsBetween(small.front().at, now) >= keeper_.control().params().stallMinSec &&
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
    if (secondsBetween(since, now) < keeper_.control().params().stallMinSec) continue;
    // A path whose stack hears no ack from the peer's is dead now. One whose stack is fine may still have
    // lost our chunks (the receiver let its end go because its way back was dead): the rules below, on our
    // acks and the receiver's "held" notes, catch that.
    if (lane && lane->delivery() == Delivery::kStuck) {
      Status s = quarantine(slot, Status(Code::kRemoteError, "the transport hears no acknowledgement from the peer"));
      if (!s.isOk()) fail(std::move(s));
      continue;
    }
    bool siblingsMove = false;  // a peer that is merely slow to post its receives stalls every lane alike
    for (int other = 0; other < paths().size(); ++other)
      siblingsMove = siblingsMove || (other != slot && stats_[static_cast<size_t>(other)].lastAck > since);
    double age = secondsBetween(since, now);
    // Alone, a lane is given longer: every path may be dead, or the whole peer slow.
    if (siblingsMove ? !keeper_.control().stalled(slot, age) : age < kLoneStallSec) continue;
    Status s = quarantine(slot, Status(Code::kRemoteError, "no acknowledgement for " + std::to_string(age) + " s" +
                                                               (siblingsMove ? " while its siblings move" : "")));
    if (!s.isOk()) fail(std::move(s));
  }
}

void MultipathConnection::maybeRound() {
  if (!keeper_.roundDue()) return;
  const auto now = now_;
  const int slot = keeper_.maybeRound(now);
  if (o_.standDown && o_.adaptive) {
    if (!stoodDown_ && keeper_.calmFor(kCalmRounds, kCalmSec, now)) {
      standDown();
    } else if (stoodDown_) {
      // One verdict may be noise (a round that ended mid-message): standing up takes two within a window.
      ++roundsSinceVerdict_;
      if (keeper_.lastNamed() >= 0) {
        if (roundsSinceVerdict_ <= kStandUpWindowRounds) standUp(keeper_.lastNamed());
        roundsSinceVerdict_ = 0;
      }
    }
  }
  if (slot >= 0) repath(slot);
  publishTelemetry(telemetry());
  if (logEnabled(LogLevel::kTrace, Subsys::kNet)) MYR_LOG(kTrace, kNet, o_.rank, formatTelemetry({telemetry()}));
}

// Paths that measure alike for a long while have nothing to steer around: the spares (scouts that cost
// connections, polls and a chunk now and then) close and no path is re-pathed; rounds go on measuring.
void MultipathConnection::standDown() {
  stoodDown_ = true;
  roundsSinceVerdict_ = kStandUpWindowRounds + 1;
  keeper_.setAdaptive(false);
  int closed = 0;
  for (int slot = 0; slot < paths().size(); ++slot) {
    const Path& p = paths().path(slot);
    if (p.state != PathState::kSpare) continue;  // one still opening closes once open (promoteReady)
    retire(slot);
    ++closed;
  }
  MYR_LOG(kInfo, kNet, o_.rank,
          o_.transport + " multipath to " + peer_.describe() + ": its " + std::to_string(o_.paths) +
              " paths have measured alike for " + std::to_string(kCalmRounds) +
              " rounds and more (no collision to avoid, or a fabric that spreads packets itself): standing down, " +
              std::to_string(closed) + " spare paths closed and no re-paths until a path falls behind");
}

void MultipathConnection::standUp(int slot) {
  stoodDown_ = false;
  keeper_.setAdaptive(true);
  MYR_LOG(kInfo, kNet, o_.rank,
          o_.transport + " multipath to " + peer_.describe() + ": path " + std::to_string(slot) + " (port " +
              std::to_string(paths().path(slot).port) +
              ") fell behind its siblings: adaptive again (spares reopen, slow paths are re-pathed)");
}

}  // namespace myriad::mp
