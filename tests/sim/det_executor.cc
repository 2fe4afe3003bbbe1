// DeterministicExecutor: the per-rank RunContext (connections from the fabric, tags per peer and direction,
// scratch painted with seeded garbage so a plan that reads scratch before writing it gets noise), and the
// round loop: start ranks as they come due, step the ranks with news in a shuffled order, then tick.
#include "det_executor.h"

#include <algorithm>
#include <string>

#include "sim_connection.h"

namespace myriad::sim {
namespace {
constexpr uint64_t kMaxRounds = uint64_t{1} << 26;  // a guard only: every round is bounded by the posts
constexpr size_t kReportRanks = 8;
}  // namespace

class DeterministicExecutor::Context final : public RunContext {
 public:
  Context(SimFabric& fabric, int rank) : fabric_(fabric), rank_(rank) {}
  int rank() const override { return rank_; }
  int nranks() const override { return fabric_.nranks(); }
  Result<Connection*> connection(int peer) override {
    if (peer < 0 || peer >= fabric_.nranks() || peer == rank_)
      return internalError("sim: rank " + std::to_string(rank_) + " asks for a connection to rank " +
                           std::to_string(peer));
    return static_cast<Connection*>(fabric_.connection(rank_, peer));
  }
  uint32_t nextSendTag(int peer) override { return next(sendTags_, peer); }
  uint32_t nextRecvTag(int peer) override { return next(recvTags_, peer); }
  Result<uint8_t*> scratch(size_t bytes) override {
    if (scratch_.size() < bytes) scratch_.resize(bytes);
    auto garbage = static_cast<uint8_t>(fabric_.rng()());
    std::fill(scratch_.begin(), scratch_.begin() + static_cast<ptrdiff_t>(bytes), garbage | 0x81);
    return scratch_.data();
  }

 private:
  uint32_t next(std::vector<uint32_t>& tags, int peer) {
    if (tags.empty()) tags.assign(static_cast<size_t>(fabric_.nranks()), 0);
    return tags[static_cast<size_t>(peer)]++;
  }
  SimFabric& fabric_;
  int rank_;
  std::vector<uint32_t> sendTags_, recvTags_;
  std::vector<uint8_t> scratch_;
};

DeterministicExecutor::DeterministicExecutor(int nranks, const SimOptions& options) : fabric_(nranks, options) {
  for (int r = 0; r < nranks; ++r) ctx_.push_back(std::make_unique<Context>(fabric_, r));
}

DeterministicExecutor::~DeterministicExecutor() = default;

std::string DeterministicExecutor::deadlock(const std::vector<std::unique_ptr<ScheduleRun>>& runs,
                                            const std::vector<uint8_t>& done) const {
  std::string o = "deadlock in round " + std::to_string(fabric_.now()) +
                  ": no rank can move and no message is in flight; unfinished ranks:";
  size_t shown = 0, more = 0;
  for (size_t r = 0; r < runs.size(); ++r) {
    if (done[r]) continue;
    if (shown++ >= kReportRanks) {
      ++more;
      continue;
    }
    o += "\n  rank " + std::to_string(r) + ": " + runs[r]->pending();
  }
  if (more) o += "\n  ... and " + std::to_string(more) + " more ranks";
  std::string left = fabric_.undelivered();
  o += left.empty() ? "\n  no message waits to be received" : "\n  messages sent and not received:\n" + left;
  return o;
}

Status DeterministicExecutor::run(std::vector<RankCall>& calls, RunStats* stats) {
  const int n = nranks();
  if (static_cast<int>(calls.size()) != n)
    return internalError("sim: " + std::to_string(calls.size()) + " calls for " + std::to_string(n) + " ranks");
  auto& rng = fabric_.rng();
  const uint64_t begin = fabric_.now(), posted = fabric_.messagesPosted();
  std::vector<std::unique_ptr<ScheduleRun>> runs(static_cast<size_t>(n));
  std::vector<uint64_t> startAt(static_cast<size_t>(n)), finished(static_cast<size_t>(n));
  std::vector<int> unstarted;
  for (int r = 0; r < n; ++r) {
    auto& call = calls[static_cast<size_t>(r)];
    runs[static_cast<size_t>(r)] =
        std::make_unique<ScheduleRun>(std::move(call.schedule), call.args, *ctx_[static_cast<size_t>(r)]);
    Status s = runs[static_cast<size_t>(r)]->init();
    if (!s.isOk()) return s.addContext("rank " + std::to_string(r));
    startAt[static_cast<size_t>(r)] = begin + rng() % static_cast<uint64_t>(fabric_.options().maxStartDelay + 1);
    unstarted.push_back(r);
  }
  std::vector<uint8_t> done(static_cast<size_t>(n), 0), started(static_cast<size_t>(n), 0);
  int left = n;
  while (left > 0) {
    if (fabric_.now() - begin > kMaxRounds) return internalError("sim: the call did not end within the round limit");
    for (size_t i = 0; i < unstarted.size();) {
      int r = unstarted[i];
      if (startAt[static_cast<size_t>(r)] > fabric_.now()) {
        ++i;
        continue;
      }
      Status s = runs[static_cast<size_t>(r)]->start();
      if (!s.isOk()) return s.addContext("rank " + std::to_string(r));
      fabric_.markNews(r);
      started[static_cast<size_t>(r)] = 1;
      unstarted[i] = unstarted.back(), unstarted.pop_back();
    }
    std::vector<int> news = fabric_.takeNews();
    // A rank that has not started yet hears its news when it starts.
    std::erase_if(news, [&](int r) { return done[static_cast<size_t>(r)] || !started[static_cast<size_t>(r)]; });
    if (news.empty()) {
      if (!unstarted.empty() || fabric_.hasScheduled()) {
        if (!fabric_.advanceToNextEvent()) fabric_.tick();
        continue;
      }
      return Status(Code::kInternalError, deadlock(runs, done));
    }
    std::shuffle(news.begin(), news.end(), rng);
    for (int r : news) {
      if (static_cast<int>(rng() % 100) < fabric_.options().skipPercent) {
        fabric_.markNews(r);  // left for the next round
        continue;
      }
      bool finishedNow = false;
      Status s = runs[static_cast<size_t>(r)]->progress(&finishedNow);
      if (!s.isOk()) return s.addContext("rank " + std::to_string(r));
      if (finishedNow) {
        done[static_cast<size_t>(r)] = 1, --left;
        finished[static_cast<size_t>(r)] = fabric_.now();
      } else if (!runs[static_cast<size_t>(r)]->settled()) {
        fabric_.markNews(r);  // it stopped for its round limit, not for want of news
      }
    }
    fabric_.tick();
  }
  std::string rest = fabric_.undelivered();
  if (!rest.empty())
    return internalError("every rank finished the call but messages were sent and never received:\n" + rest);
  if (stats) {
    stats->rounds = fabric_.now() - begin;
    stats->messages = fabric_.messagesPosted() - posted;
    stats->started = startAt;
    stats->finished = finished;
  }
  return Status::ok();
}

}  // namespace myriad::sim
