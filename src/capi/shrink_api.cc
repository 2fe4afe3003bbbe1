// myrCommShrink: a communicator of the ranks not excluded, made without a word to the excluded ones (they may
// be dead) and without a collective on the parent (it may be failed or aborted). The survivors meet through
// the parent's store under "shrink<k>.", k counting the shrinks of this handle (the same on every survivor,
// as each calls myrCommShrink in the same order): each publishes its exclude list, the lowest survivor
// compares them all and publishes a verdict, and the new communicator bootstraps under "shrink<k>.comm.".
#include <algorithm>

#include "base/wire.h"
#include "capi/handles.h"

namespace myriad::capi {
namespace {

std::string listText(const std::vector<int>& ranks) {
  std::string out = "{";
  for (size_t i = 0; i < ranks.size(); ++i) out += (i ? ", " : "") + std::to_string(ranks[i]);
  return out + "}";
}

// The exclude list, sorted, after the checks NCCL leaves to the caller.
Result<std::vector<int>> checkedList(const Comm& parent, const int* list, int count) {
  if (count < 0) return invalidArgument("excludeRanksCount is negative (" + std::to_string(count) + ")");
  if (count > 0 && !list)
    return invalidArgument("excludeRanksList is NULL with excludeRanksCount " + std::to_string(count));
  std::vector<int> out(list, list + count);
  std::sort(out.begin(), out.end());
  for (size_t i = 0; i < out.size(); ++i) {
    if (out[i] < 0 || out[i] >= parent.nranks())
      return invalidArgument("excluded rank " + std::to_string(out[i]) + " is out of range [0, " +
                             std::to_string(parent.nranks()) + ")");
    if (i > 0 && out[i] == out[i - 1])
      return invalidArgument("rank " + std::to_string(out[i]) + " is listed twice in excludeRanksList");
  }
  if (static_cast<int>(out.size()) == parent.nranks()) return invalidArgument("excludeRanksList names every rank");
  if (std::binary_search(out.begin(), out.end(), parent.rank()))
    return invalidUsage("excludeRanksList names this rank (" + std::to_string(parent.rank()) +
                        "): an excluded rank must not call myrCommShrink");
  return out;
}

Bytes encode(const std::vector<int>& ranks) {
  Writer w;
  w.i32(static_cast<int32_t>(ranks.size()));
  for (int r : ranks) w.i32(r);
  return std::move(w.bytes());
}

std::string decodedText(const Bytes& b) {
  Reader rd(b);
  std::vector<int> ranks(static_cast<size_t>(std::max(0, rd.i32())));
  for (int& r : ranks) r = rd.i32();
  return rd.failed() ? "(malformed)" : listText(ranks);
}

struct Meeting {
  Comm& parent;
  Store& store;                // the parent's, keys under "shrink<k>."
  std::vector<int> survivors;  // parent ranks, in order: the new ranks
  Bytes list;                  // this rank's exclude list, encoded
  Clock::time_point deadline;  // the config's initTimeoutMs from the start
  int timeoutMs;

  int msLeft() const {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
    return static_cast<int>(std::max<long long>(1, left));
  }
  std::string me() const { return "rank " + std::to_string(parent.rank()); }

  // A store that fails (not a key that is late) has lost its host process.
  Status storeGone(const Status& s) const {
    return Status(Code::kRemoteError,
                  me() + ": myrCommShrink cannot reach the parent's rendezvous store (" + store.describe() +
                      "): its host process has probably exited, maybe among the excluded ranks. Shrink needs that "
                      "store; make a new communicator instead (myrGetUniqueId on a survivor, then "
                      "myrCommInitRank on every survivor). The store said: " +
                      s.message());
  }

  // After a wait timed out: who has not published a list (tryGet never waits).
  Status late() {
    std::vector<int> missing;
    for (int r : survivors) {
      auto got = store.tryGet("list." + std::to_string(r));
      if (got.status().code() == Code::kNotSupported) missing.push_back(r);
      if (!got.isOk() && got.status().code() != Code::kNotSupported) return storeGone(got.status());
    }
    return Status(Code::kTimeout,
                  me() + ": myrCommShrink: parent rank(s) " + listText(missing) +
                      " did not call myrCommShrink within " + std::to_string(timeoutMs) +
                      " ms (initTimeoutMs): a dead rank must be in excludeRanksList; a live one must call it too");
  }

  Status fromWait(const Status& s) {
    if (s.code() == Code::kTimeout) return late();
    return storeGone(s);
  }

  // The lowest survivor: compares every list with its own and publishes the verdict ("" when they agree).
  Status judge() {
    Status verdict;
    for (int r : survivors) {
      if (r == parent.rank()) continue;
      auto got = store.get("list." + std::to_string(r), msLeft(), nullptr);
      if (!got.isOk()) {
        verdict = fromWait(got.status());
        if (verdict.code() == Code::kRemoteError) return verdict;
        break;
      }
      if (got.value() != list) {
        verdict = invalidUsage("myrCommShrink: parent rank " + std::to_string(r) + " excludes " +
                               decodedText(got.value()) + ", parent rank " + std::to_string(parent.rank()) +
                               " excludes " + decodedText(list) + ": every survivor must pass the same list");
        break;
      }
    }
    Writer w;
    w.str(verdict.isOk() ? "" : verdict.message());
    w.i32(static_cast<int32_t>(verdict.code()));
    Status s = store.set("verdict", w.bytes());
    if (!s.isOk()) return storeGone(s);
    return verdict;
  }

  Status follow() {
    int root = survivors.front();
    auto theirs = store.get("list." + std::to_string(root), msLeft(), nullptr);
    if (!theirs.isOk()) return fromWait(theirs.status());
    if (theirs.value() != list)
      return invalidUsage("myrCommShrink: parent rank " + std::to_string(parent.rank()) + " excludes " +
                          decodedText(list) + ", parent rank " + std::to_string(root) + " excludes " +
                          decodedText(theirs.value()) + ": every survivor must pass the same list");
    auto verdict = store.get("verdict", msLeft(), nullptr);
    if (!verdict.isOk()) return fromWait(verdict.status());
    Reader rd(verdict.value());
    std::string text = rd.str(1 << 16);
    auto code = static_cast<Code>(rd.i32());
    if (rd.failed()) return internalError("myrCommShrink: malformed verdict from parent rank " + std::to_string(root));
    if (text.empty()) return Status::ok();
    return Status(code, me() + " learned from parent rank " + std::to_string(root) + ": " + text);
  }

  Status agree() {
    Status s = store.set("list." + std::to_string(parent.rank()), list);
    if (!s.isOk()) return storeGone(s);
    return parent.rank() == survivors.front() ? judge() : follow();
  }
};

Status commShrink(myrComm_t comm, int* excludeRanksList, int excludeRanksCount, myrComm_t* newcomm,
                  myrConfig_t* userConfig, int flags) {
  MYR_ASSIGN_OR_RETURN(Comm * parent, startChild(comm, newcomm, "myrCommShrink"));
  if (flags & ~MYR_SHRINK_ABORT)
    return invalidArgument("shrinkFlags " + std::to_string(flags) +
                           " has unknown bits (MYR_SHRINK_DEFAULT 0, MYR_SHRINK_ABORT 1)");
  MYR_ASSIGN_OR_RETURN(std::vector<int> excluded, checkedList(*parent, excludeRanksList, excludeRanksCount));
  MYR_ASSIGN_OR_RETURN(Config config, applyUserConfig(parent->config(), userConfig));

  // Abort: calls in flight on the parent (waiting on a dead peer, say) fail at once. Either way the calls
  // queued on streams are done before the new communicator forms.
  if (flags & MYR_SHRINK_ABORT) parent->abort();
  parent->waitIdle();
  int k = comm->shrinks++;
  std::string prefix = "shrink" + std::to_string(k) + ".";
  PrefixStore store(parent->store(), prefix);
  std::vector<int> survivors;
  for (int r = 0; r < parent->nranks(); ++r)
    if (!std::binary_search(excluded.begin(), excluded.end(), r)) survivors.push_back(r);
  auto deadline = Clock::now() + std::chrono::milliseconds(config.initTimeoutMs);
  Meeting meeting{*parent, store, survivors, encode(excluded), deadline, config.initTimeoutMs};
  MYR_TRY(meeting.agree());
  auto newRank = std::find(survivors.begin(), survivors.end(), parent->rank()) - survivors.begin();
  return initChild(*parent, prefix + "comm.", "k" + std::to_string(k), static_cast<int>(survivors.size()),
                   static_cast<int>(newRank), config, userConfig, newcomm, /*endWithParent=*/false);
}

}  // namespace
}  // namespace myriad::capi

extern "C" myrResult_t myrCommShrink(myrComm_t comm, int* excludeRanksList, int excludeRanksCount, myrComm_t* newcomm,
                                     myrConfig_t* config, int shrinkFlags) {
  return myriad::capi::finish(
      comm, myriad::capi::commShrink(comm, excludeRanksList, excludeRanksCount, newcomm, config, shrinkFlags),
      __func__);
}
