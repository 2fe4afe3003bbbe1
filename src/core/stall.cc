// A call that waits without data moving, judged with the liveness channel's view of the others. The rank
// waited on is followed along the chain of waiters (each says whom it waits on) to its end:
// - a rank that is gone (dead: the liveness channel has failed the communicator already; left: it destroyed
//   its communicator or exited, and this call still needs it) fails the call at once;
// - a rank that is not inside a call is late (a checkpoint, a data-loader stall): the call waits for it up
//   to MYRIAD_TIMEOUT_MS (30 minutes by default) and says so every MYRIAD_STALL_REPORT_S;
// - a rank inside a call that moves data is slow, not stuck: waited for, as a late one;
// - a cycle of ranks inside calls, each waiting on the next (mismatched calls, lost data), or a rank inside
//   a call stalled on one that does not answer, is stuck: after MYRIAD_STALL_TIMEOUT_MS of silence the
//   call fails naming the chain.
#include <algorithm>

#include "base/log.h"
#include "core/comm.h"
#include "core/duration_text.h"

namespace myriad {
namespace {

constexpr int kMaxHops = 16;
constexpr int kFreshMs = 1000;  // a peer's state older than this is asked for again

enum class End { kUnknown, kGone, kLate, kBusy, kCycle };

struct Chain {
  std::vector<int> ranks;  // from the rank waited on to the end
  std::vector<liveness::SelfState> states;
  End end = End::kUnknown;
  std::string text;  // "rank 1 (in all_reduce #4 for 3 s) waits on rank 2, which is not in a call ..."
};

std::string callText(const liveness::SelfState& s) {
  if (s.seq == 0) return "no call yet";
  return s.op + " #" + std::to_string(s.seq) + " (" + std::to_string(s.count) + " x " + s.dtype + ")";
}

std::string stateText(const liveness::SelfState& s) {
  if (!s.inCall)
    return s.seq == 0
               ? "alive, has entered no call"
               : "alive, not in a call: last entered " + callText(s) + ", finished " + secondsText(s.sinceMs) + " ago";
  return "in " + callText(s) + " for " + secondsText(s.sinceMs);
}

Chain follow(Liveness& live, int me, int first) {
  Chain c;
  int cur = first;
  for (int hop = 0; hop < kMaxHops; ++hop) {
    c.ranks.push_back(cur);
    if (auto fate = live.fateOf(cur)) {
      c.end = End::kGone;
      c.text += fate->text;
      return c;
    }
    Liveness::View v = live.view(cur, kFreshMs);
    if (!v.known) {
      c.end = End::kUnknown;
      c.text += "rank " + std::to_string(cur) + " (no answer yet)";
      return c;
    }
    c.states.push_back(v.state);
    c.text += "rank " + std::to_string(cur) + " (" + stateText(v.state) + ")";
    if (!v.state.inCall) {
      c.end = End::kLate;
      return c;
    }
    const int next = v.state.waitsOn;
    if (next < 0) {
      c.end = End::kBusy;
      return c;
    }
    c.text += " waits on ";
    if (next == me || std::find(c.ranks.begin(), c.ranks.end(), next) != c.ranks.end()) {
      c.end = End::kCycle;
      c.text += "rank " + std::to_string(next) + (next == me ? " (the reporting rank)" : "");
      return c;
    }
    cur = next;
  }
  c.end = End::kUnknown;
  c.text += "...";
  return c;
}

}  // namespace

Status Comm::judgeStall(int peer, long long silentMs) {
  const std::string me = "rank " + std::to_string(rank_);
  const liveness::SelfState self = selfState();
  if (auto fate = liveness_->fateOf(peer)) {
    if (fate->kind == liveness::FateKind::kDead) {
      Status failed = usable();  // normally the death's own error, recorded by the liveness thread
      return failed.isOk() ? Status(Code::kRemoteError, me + ": " + fate->text) : failed;
    }
    return Status(Code::kRemoteError,
                  me + ": " + fate->text + ", and this rank's " + callText(self) + " still waits on it");
  }
  reportStall(silentMs);
  const bool late = silentMs > config_.timeoutMs;
  const bool stalled = silentMs > config_.stallTimeoutMs;
  if (!late && !stalled) return Status::ok();
  Chain c = follow(*liveness_, rank_, peer);
  const std::string waited = me + ": " + callText(self) + " moved no data with " +
                             peers_[static_cast<size_t>(peer)].describe() + " for " + std::to_string(silentMs) +
                             " ms; ";
  if (late)
    return Status(Code::kTimeout, waited + "it waits on " + c.text + " (MYRIAD_TIMEOUT_MS is " +
                                      std::to_string(config_.timeoutMs) + ")");
  if (c.end == End::kCycle || c.end == End::kGone || (c.end == End::kUnknown && !c.states.empty()))
    return Status(Code::kTimeout, waited + "stuck: " + c.text + " (MYRIAD_STALL_TIMEOUT_MS is " +
                                      std::to_string(config_.stallTimeoutMs) + ")");
  return Status::ok();
}

void Comm::reportStall(long long silentMs) {
  if (config_.stallReportS <= 0 || silentMs < 1000LL * config_.stallReportS) return;
  const auto now = Clock::now();
  if (now - lastStallReport_ < std::chrono::seconds(config_.stallReportS)) return;
  lastStallReport_ = now;
  std::vector<int> waited;
  for (Connection* c : open_)
    if (c->busy() && msSince(c->lastProgress()) >= 1000 && waited.size() < 8) waited.push_back(c->peer().rank);
  std::string line = callText(selfState()) + " waiting " + std::to_string(silentMs / 1000) + " s on ";
  for (size_t i = 0; i < waited.size(); ++i) line += (i ? "; " : "") + follow(*liveness_, rank_, waited[i]).text;
  MYR_LOG(kWarn, kColl, rank_, line);
}

}  // namespace myriad
