#include "exec/device_executor.h"

#include <algorithm>
#include <string>
#include <unordered_map>
#include <vector>

#include "plan/dtype.h"

namespace myriad {
namespace {

using Step = Schedule::Step;
using Kind = Schedule::Kind;

// Lane 0 is the caller's stream; a peer p has four: its sends, its receives, and the compute lanes that
// follow each of them.
enum LaneKind : int32_t { kSendLane = 0, kRecvLane = 1, kAfterSend = 2, kAfterRecv = 3, kPerPeer = 4 };
int32_t peerLane(int peer, LaneKind k) {
  return 1 + kPerPeer * peer + k;
}
bool isMessageLane(int32_t lane) {
  return lane > 0 && (lane - 1) % kPerPeer < kAfterSend;
}

// The peers a schedule exchanges messages with, ascending.
std::vector<int> peers(const Schedule& s) {
  std::vector<int> out;
  for (const auto& st : s.steps())
    if (Schedule::isMessage(st.kind)) out.push_back(st.peer);
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

class Lowering {
 public:
  Lowering(const Schedule& s, const CollArgs& args, DeviceComm& dc, DeviceStream* user)
      : s_(s), args_(args), dc_(dc), dev_(dc.device()), user_(user) {}

  Status run() {
    MYR_ASSIGN_OR_RETURN(capturing_, dev_.capturing(user_));
    MYR_TRY(openChannels());
    MYR_TRY(bind());
    assignLanes();
    MYR_TRY(start());
    for (Step i = 0; i < static_cast<Step>(s_.size()); ++i) MYR_TRY(lower(i));
    return finish();
  }

 private:
  Status bind() {
    bases_.assign(BufRef::kUser + args_.p2p.size(), nullptr);
    bases_[BufRef::kSend] = static_cast<uint8_t*>(const_cast<void*>(args_.sendbuff));
    bases_[BufRef::kRecv] = static_cast<uint8_t*>(args_.recvbuff);
    if (s_.scratchBytes()) {
      MYR_ASSIGN_OR_RETURN(bases_[BufRef::kScratch], dc_.scratch(s_.scratchBytes()));
    }
    for (size_t i = 0; i < args_.p2p.size(); ++i) bases_[BufRef::kUser + i] = static_cast<uint8_t*>(args_.p2p[i].buf);
    return Status::ok();
  }

  // Opening a channel is a handshake with the peer: in ascending peer order on every rank, which is the
  // order of (lower rank, higher rank) pairs everywhere, so the globally first pair not yet open is at the
  // head of both its ranks' lists and no cycle of ranks waiting for each other can form.
  Status openChannels() {
    for (int p : peers(s_)) {
      MYR_ASSIGN_OR_RETURN(DeviceChannel * ch, dc_.channel(p));
      ch->beginCall();
      channels_.push_back(ch);
    }
    return Status::ok();
  }

  uint8_t* at(const BufRef& b) const { return bases_[b.base] + b.offset; }

  void assignLanes() {
    const auto& steps = s_.steps();
    laneOf_.resize(steps.size());
    eventOf_.assign(steps.size(), -1);
    for (size_t i = 0; i < steps.size(); ++i) {
      const auto& st = steps[i];
      int32_t lane = 0;
      if (st.kind == Kind::kSend) {
        lane = peerLane(st.peer, kSendLane);
      } else if (Schedule::isMessage(st.kind)) {
        lane = peerLane(st.peer, kRecvLane);
      } else if (st.numDeps > 0) {
        auto deps = s_.deps(static_cast<Step>(i));
        int32_t from = laneOf_[static_cast<size_t>(*std::max_element(deps.begin(), deps.end()))];
        lane = isMessageLane(from) ? from + kAfterSend : from;
      }
      laneOf_[i] = lane;
      for (Step d : s_.deps(static_cast<Step>(i)))
        if (laneOf_[static_cast<size_t>(d)] != lane && eventOf_[static_cast<size_t>(d)] < 0)
          eventOf_[static_cast<size_t>(d)] = events_++;
    }
  }

  // The caller's stream waits for the communicator's previous call, then everything of this call starts
  // after what the stream already holds.
  // Under graph capture the call is ordered by the stream the graph is launched on only: an event recorded
  // outside the capture cannot be waited for inside it, nor one recorded inside waited for outside.
  Status start() {
    MYR_ASSIGN_OR_RETURN(end_, dc_.endEvent());
    if (dc_.ranBefore() && !capturing_) MYR_TRY(dev_.waitEvent(user_, end_));
    MYR_ASSIGN_OR_RETURN(start_, dc_.event(0));
    return dev_.record(start_, user_);
  }

  Result<DeviceEvent*> stepEvent(int32_t n) { return dc_.event(1 + static_cast<size_t>(n)); }

  Result<DeviceStream*> stream(int32_t lane) {
    if (lane == 0) return user_;
    bool created = false;
    MYR_ASSIGN_OR_RETURN(DeviceStream * s, dc_.lane(static_cast<size_t>(lane), &created));
    if (created) {
      static const char* const kWhat[] = {"sends to", "receives from", "compute after sends to",
                                          "compute after receives from"};
      dev_.setName(s, "rank " + std::to_string(dc_.rank()) + " lane: " + kWhat[(lane - 1) % kPerPeer] + " rank " +
                          std::to_string((lane - 1) / kPerPeer));
    }
    if (std::find(used_.begin(), used_.end(), lane) == used_.end()) {
      used_.push_back(lane);
      MYR_TRY(dev_.waitEvent(s, start_));
    }
    return s;
  }

  Status lower(Step i) {
    const auto& st = s_.steps()[static_cast<size_t>(i)];
    int32_t lane = laneOf_[static_cast<size_t>(i)];
    MYR_ASSIGN_OR_RETURN(DeviceStream * s, stream(lane));
    for (Step d : s_.deps(i)) {
      int32_t from = laneOf_[static_cast<size_t>(d)];
      if (from == lane) continue;
      // Steps of one lane run in index order: waiting for a later one covers the earlier ones.
      Step& seen = waited_.try_emplace(key(lane, from), -1).first->second;
      if (seen >= d) continue;
      seen = d;
      MYR_ASSIGN_OR_RETURN(DeviceEvent * e, stepEvent(eventOf_[static_cast<size_t>(d)]));
      MYR_TRY(dev_.waitEvent(s, e));
    }
    MYR_TRY(emit(st, s));
    if (int32_t e = eventOf_[static_cast<size_t>(i)]; e >= 0) {
      MYR_ASSIGN_OR_RETURN(DeviceEvent * ev, stepEvent(e));
      MYR_TRY(dev_.record(ev, s));
    }
    return Status::ok();
  }

  Status emit(const Schedule::StepInfo& st, DeviceStream* s) {
    switch (st.kind) {
      case Kind::kSend: return send(st, s);
      case Kind::kRecv:
      case Kind::kRecvReduce: return receive(st, s);
      case Kind::kReduce:
        return st.n ? dev_.reduce(s, at(st.dst), at(st.a), at(st.b), st.n, st.dtype, st.op) : Status::ok();
      case Kind::kCopy: return st.n && st.dst != st.a ? dev_.copy(s, at(st.dst), at(st.a), st.n) : Status::ok();
      case Kind::kScale: return st.n ? dev_.scaleAvg(s, at(st.dst), st.n, st.dtype, st.divisor) : Status::ok();
      case Kind::kJoin: return Status::ok();
    }
    return internalError("device lowering: unknown step kind");
  }

  static size_t pieces(size_t bytes, size_t slotBytes) { return bytes == 0 ? 1 : (bytes + slotBytes - 1) / slotBytes; }

  // A message of zero bytes is still one piece: it carries the signal the receiver waits for.
  Status send(const Schedule::StepInfo& st, DeviceStream* s) {
    MYR_ASSIGN_OR_RETURN(DeviceChannel * ch, dc_.channel(st.peer));
    const ChannelLayout& l = ch->peerLayout;
    const uint8_t* src = at(st.a);
    for (size_t k = 0, n = pieces(st.n, l.slotBytes); k < n; ++k) {
      uint64_t q = ++ch->sent;
      if (q > l.slots) MYR_TRY(dev_.waitFlag(s, ch->own(ChannelLayout::kFreed), q - l.slots));
      size_t off = k * l.slotBytes, len = std::min(l.slotBytes, st.n - off);
      if (len) MYR_TRY(dev_.copy(s, ch->peerInboxSlot(q), src + off, len));
      MYR_TRY(dev_.writeFlag(s, ch->peers(ChannelLayout::kArrived), q));
    }
    return Status::ok();
  }

  Status receive(const Schedule::StepInfo& st, DeviceStream* s) {
    MYR_ASSIGN_OR_RETURN(DeviceChannel * ch, dc_.channel(st.peer));
    const ChannelLayout& l = ch->layout;
    const size_t es = st.kind == Kind::kRecvReduce ? dtypeSize(st.dtype) : 1;
    for (size_t k = 0, n = pieces(st.n, l.slotBytes); k < n; ++k) {
      uint64_t r = ++ch->received;
      MYR_TRY(dev_.waitFlag(s, ch->own(ChannelLayout::kArrived), r));
      size_t off = k * l.slotBytes, len = std::min(l.slotBytes, st.n - off);
      if (len && st.kind == Kind::kRecv) MYR_TRY(dev_.copy(s, at(st.dst) + off, ch->inboxSlot(r), len));
      if (len && st.kind == Kind::kRecvReduce)
        MYR_TRY(dev_.reduce(s, at(st.dst) + off, ch->inboxSlot(r), at(st.b) + off, len / es, st.dtype, st.op));
      MYR_TRY(dev_.writeFlag(s, ch->peers(ChannelLayout::kFreed), r));
    }
    return Status::ok();
  }

  // Every lane this call used ends before the caller's stream goes on. Then, on the caller's stream, the
  // closing handshakes of the channels (each step for all channels before the next, so no rank waits for a
  // peer that waits for a third): all our pieces consumed and `done` to the peer; the peer's `done` (it
  // writes nothing more into our flags this call), our arrived/freed/done back to 0 and `cleared` to the
  // peer; the peer's `cleared` (its next call may start: our flags are clear), and ours back to 0 — the
  // peer's next `cleared` comes only after our next `done`. The communicator's end event follows.
  Status finish() {
    using L = ChannelLayout;
    int32_t n = events_;
    for (int32_t lane : used_) {
      MYR_ASSIGN_OR_RETURN(DeviceStream * s, dc_.lane(static_cast<size_t>(lane)));
      MYR_ASSIGN_OR_RETURN(DeviceEvent * e, stepEvent(n++));
      MYR_TRY(dev_.record(e, s));
      MYR_TRY(dev_.waitEvent(user_, e));
    }
    for (DeviceChannel* ch : channels_) {
      if (ch->sent) MYR_TRY(dev_.waitFlag(user_, ch->own(L::kFreed), ch->sent));
      MYR_TRY(dev_.writeFlag(user_, ch->peers(L::kDone), 1));
    }
    for (DeviceChannel* ch : channels_) {
      MYR_TRY(dev_.waitFlag(user_, ch->own(L::kDone), 1));
      for (auto f : {L::kArrived, L::kFreed, L::kDone}) MYR_TRY(dev_.writeFlag(user_, ch->own(f), 0));
      MYR_TRY(dev_.writeFlag(user_, ch->peers(L::kCleared), 1));
    }
    for (DeviceChannel* ch : channels_) {
      MYR_TRY(dev_.waitFlag(user_, ch->own(L::kCleared), 1));
      MYR_TRY(dev_.writeFlag(user_, ch->own(L::kCleared), 0));
    }
    if (!capturing_) {
      MYR_TRY(dev_.record(end_, user_));
      dc_.markRan();
    }
    return Status::ok();
  }

  static uint64_t key(int32_t a, int32_t b) { return static_cast<uint64_t>(a) << 32 | static_cast<uint32_t>(b); }

  const Schedule& s_;
  const CollArgs& args_;
  DeviceComm& dc_;
  Device& dev_;
  DeviceStream* user_;
  std::vector<uint8_t*> bases_;
  std::vector<int32_t> laneOf_;   // per step
  std::vector<int32_t> eventOf_;  // per step: its event among this call's, or -1 (no dependent elsewhere)
  int32_t events_ = 0;
  std::vector<int32_t> used_;                  // lanes other than the caller's stream, in order of first use
  std::vector<DeviceChannel*> channels_;       // the channels this call uses, in ascending peer order
  std::unordered_map<uint64_t, Step> waited_;  // (lane, other lane) -> the latest step of other waited for
  bool capturing_ = false;                     // the caller's stream is being captured into a CUDA graph
  DeviceEvent* start_ = nullptr;
  DeviceEvent* end_ = nullptr;
};

}  // namespace

Status deviceRunnable(const Schedule& schedule, DeviceComm& dev, DeviceStream* stream) {
  if (schedule.next())
    return invalidUsage(schedule.name() +
                        ": its second stage is planned from data the ranks exchange, which device memory does not "
                        "support yet; choose another algorithm (MYRIAD_ALGO)");
  if (!schedule.localBytes().empty())
    return invalidUsage(schedule.name() + ": plans with host-side local bytes do not run on device memory yet");
  MYR_ASSIGN_OR_RETURN(bool capturing, dev.device().capturing(stream));
  if (!capturing) return Status::ok();
  for (int p : peers(schedule))
    if (!dev.hasChannel(p))
      return invalidUsage(schedule.name() + ": captured into a CUDA graph before this communicator reached rank " +
                          std::to_string(p) +
                          " on the device: make one uncaptured call first (setting up a channel cannot be captured)");
  if (schedule.scratchBytes() && !dev.scratchFits(schedule.scratchBytes()))
    return invalidUsage(schedule.name() +
                        ": captured into a CUDA graph needing more scratch than this communicator has: make one "
                        "uncaptured call of this size first");
  return Status::ok();
}

Status enqueueSchedule(const Schedule& schedule, const CollArgs& args, DeviceComm& dev, DeviceStream* stream) {
  MYR_TRY(deviceRunnable(schedule, dev, stream));
  return Lowering(schedule, args, dev, stream).run();
}

Status DeviceExecutor::execute(Schedule schedule, const CollArgs& args) {
  // A refusal enqueues nothing and leaves the communicator usable; a failure after that does not.
  MYR_TRY(deviceRunnable(schedule, dev_, stream_));
  Status s = Lowering(schedule, args, dev_, stream_).run();
  if (s.isOk()) return Status::ok();
  // Past the refusals the caller's arguments were fine: a device call refusing its arguments here (an import
  // of the wrong size, say) is this library's fault, and the other ranks must hear of it (Comm::fail does not
  // announce invalid arguments, which every rank finds by itself).
  if (s.code() == Code::kInvalidArgument) s = Status(Code::kInternalError, s.message());
  return comm_.fail(s.addContext("enqueueing on the device"));
}

}  // namespace myriad
