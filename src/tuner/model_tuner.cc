// The cost-model tuner: plans every candidate for every rank of the call's shape, prices the schedules with
// predict() (cost_model.h) and picks the fastest. The answer is cached per shape (kind, bytes, dtype, chunk
// size, links, candidates) and communicator layout, so planning happens once per distinct shape and not on
// every call; each distinct shape is explained once under MYRIAD_DEBUG_SUBSYS=TUNE.
//
// Agreement: every input is a fact all ranks share (the shape, the layout, the settings), and the model is
// deterministic, so every rank chooses the same algorithm. All-to-allv has no size all ranks know; its
// choice is the candidate whose worst ratio to the best over a range of block sizes is smallest.
#include <algorithm>
#include <cstdio>
#include <map>
#include <memory>
#include <mutex>

#include "base/log.h"
#include "plan/dtype.h"
#include "tuner/cost_model.h"
#include "tuner/tuner.h"

namespace myriad {
namespace {

constexpr size_t kMaxCached = 4096;

// Pricing plans every rank's schedule of every candidate: time and memory grow with the ranks times the
// steps per rank (n^2 for the rings). Beyond this many ranks the call is priced on a communicator of at most
// this many with the same host sizes (the first hosts, in order), and that choice is used at the full size:
// bounded (about 10 ms per shape), the same on every rank, but blind to crossovers that move with n.
constexpr int kMaxPricedRanks = 64;

// The layout a call of `layout` is priced on: itself when small enough, else its first hosts (cut to
// kMaxPricedRanks ranks), on their machines.
std::shared_ptr<const HostLayout> pricedLayout(const std::shared_ptr<const HostLayout>& layout) {
  if (layout->nranks() <= kMaxPricedRanks) return layout;
  std::vector<int> hostOf, cores;
  std::vector<std::string> machine;
  int h = 0;
  for (const std::vector<int>& host : layout->hosts) {
    const int size = std::min(static_cast<int>(host.size()), kMaxPricedRanks);
    if (!hostOf.empty() && static_cast<int>(hostOf.size()) + size > kMaxPricedRanks) break;
    const int m = layout->machineOfHost(h);
    hostOf.insert(hostOf.end(), static_cast<size_t>(size), h++);
    machine.insert(machine.end(), static_cast<size_t>(size), std::to_string(m));
    cores.insert(cores.end(), static_cast<size_t>(size), layout->coresOf(m));
  }
  auto priced = HostLayout::fromHostOf(hostOf);
  return layout->machineOf.empty() ? priced : HostLayout::onMachines(*priced, machine, cores);
}

// Sizes (per peer) at which all-to-allv's candidates are compared.
constexpr size_t kAllToAllvBlocks[] = {64, size_t{4} << 10, size_t{64} << 10, size_t{1} << 20};

// Arguments of the call's shape with placeholder buffers (plans only compute offsets; nothing is touched).
CollArgs argsOf(const CallShape& s, size_t bytes) {
  static char sendTag, recvTag;
  CollArgs a;
  a.kind = s.kind;
  a.dtype = s.dtype;
  a.count = bytes / dtypeSize(s.dtype);
  a.sendbuff = &sendTag;
  a.recvbuff = &recvTag;
  return a;
}

// Every rank's plan of `cand` for `args`, or the first rank's refusal.
Result<std::vector<Schedule>> planEveryRank(const Candidate& cand, const CollArgs& args, const CommView& view) {
  std::vector<Schedule> schedules;
  schedules.reserve(static_cast<size_t>(view.nranks()));
  for (int r = 0; r < view.nranks(); ++r) {
    CommView rv = view;
    rv.rank = r;
    MYR_ASSIGN_OR_RETURN(Schedule s, cand.plan(args, rv));
    schedules.push_back(std::move(s));
  }
  return schedules;
}

// The shape's part of a cache key; the layout is the other part, by identity (O(1) per call however many
// ranks): the cache holds the layout, so its address cannot be reused by another while the entry lives.
std::string keyOf(const CallShape& s, const CommView& v, std::span<const Candidate> cands) {
  std::string key = std::to_string(static_cast<int>(s.kind)) + "/" + std::to_string(s.bytes) + "/" +
                    std::to_string(static_cast<int>(s.dtype)) + "/" + (s.perPeerCounts ? "v" : "") + "/" +
                    std::to_string(v.chunkBytes) + (v.hostShm ? "s" : "") + (v.netRdma ? "r" : "");
  for (const Candidate& c : cands) key += std::string("/") + c.name;
  return key;
}

struct Cached {
  std::shared_ptr<const HostLayout> layout;  // keeps the key's layout address from being reused
  Choice choice;
};

class ModelTuner final : public Tuner {
 public:
  explicit ModelTuner(const TunerConstants& k) : k_(k) {}
  const char* name() const override { return "model"; }

  Choice choose(const CallShape& shape, const CommView& view, std::span<const Candidate> cands) const override {
    if (cands.size() <= 1) return {cands.empty() ? "" : cands[0].name, "only candidate", {}};
    std::pair<const HostLayout*, std::string> key{view.layout.get(), keyOf(shape, view, cands)};
    {
      std::lock_guard<std::mutex> lock(mu_);
      auto it = cache_.find(key);
      if (it != cache_.end()) return it->second.choice;
    }
    CommView priced = view;
    priced.layout = pricedLayout(view.layout);
    priced.rank = 0;
    Choice c = shape.perPeerCounts ? chooseUnsized(shape, priced, cands) : chooseAt(shape, shape.bytes, priced, cands);
    if (priced.layout != view.layout)
      c.by += " priced at " + std::to_string(priced.nranks()) + " ranks on hosts " + priced.layout->describe();
    MYR_LOG(kInfo, kTune, view.rank,
            explainChoice(shape, view.layout->describe() + view.layout->describeMachines(), c));
    std::lock_guard<std::mutex> lock(mu_);
    if (cache_.size() >= kMaxCached) cache_.clear();
    cache_.emplace(std::move(key), Cached{view.layout, c});
    return c;
  }

 private:
  std::vector<CandidateCost> costs(const CallShape& shape, size_t bytes, const CommView& view,
                                   std::span<const Candidate> cands) const {
    CollArgs args = argsOf(shape, bytes);
    std::vector<CandidateCost> out;
    for (const Candidate& c : cands) {
      CandidateCost cost{c.name, -1, ""};
      auto schedules = planEveryRank(c, args, view);
      if (schedules.isOk()) {
        const Prediction p = predict(schedules.value(), view, k_);
        cost.us = p.us;
        cost.cpuBound = p.cpuBoundUs > 0 && p.us <= p.cpuBoundUs + k_.callUs;
      } else
        cost.error = schedules.status().message();
      out.push_back(std::move(cost));
    }
    return out;
  }

  static std::string fastest(const std::vector<CandidateCost>& costs) {
    const CandidateCost* best = nullptr;
    for (const CandidateCost& c : costs)
      if (c.us >= 0 && (!best || c.us < best->us)) best = &c;
    return best ? best->name : costs.front().name;
  }

  Choice chooseAt(const CallShape& shape, size_t bytes, const CommView& view, std::span<const Candidate> cands) const {
    Choice c;
    c.by = "model";
    c.costs = costs(shape, bytes, view, cands);
    c.name = fastest(c.costs);
    return c;
  }

  // The price of the stage a two-stage all-to-allv plan runs before its exchange (the counts, gathered so
  // that the exchange can be planned), 0 for a one-stage plan. Planned with equal counts of `block` bytes.
  double firstStageUs(const CallShape& shape, size_t block, const CommView& view, const Candidate& cand) const {
    CollArgs args = argsOf(shape, block);
    auto n = static_cast<size_t>(view.nranks());
    args.sendCounts.assign(n, args.count);
    args.recvCounts.assign(n, args.count);
    for (size_t p = 0; p < n; ++p) {
      args.sendDispls.push_back(p * args.count);
      args.recvDispls.push_back(p * args.count);
    }
    auto schedules = planEveryRank(cand, args, view);
    if (!schedules.isOk()) return 0;
    const bool twoStage = std::any_of(schedules.value().begin(), schedules.value().end(),
                                      [](const Schedule& s) { return static_cast<bool>(s.next()); });
    return twoStage ? predict(schedules.value(), view, k_).us - k_.callUs : 0;
  }

  // Minimax regret over kAllToAllvBlocks: the reported time of each candidate is its worst ratio to the best,
  // each priced as the exchange of equal blocks plus the count exchange a two-stage plan runs first.
  Choice chooseUnsized(const CallShape& shape, const CommView& view, std::span<const Candidate> cands) const {
    std::vector<double> worst(cands.size(), 0);
    for (size_t block : kAllToAllvBlocks) {
      auto cs = costs(shape, block, view, cands);
      for (size_t i = 0; i < cs.size(); ++i)
        if (cs[i].us >= 0) cs[i].us += firstStageUs(shape, block, view, cands[i]);
      double best = -1;
      for (const auto& c : cs)
        if (c.us >= 0 && (best < 0 || c.us < best)) best = c.us;
      for (size_t i = 0; i < cs.size(); ++i)
        worst[i] = cs[i].us < 0 || best <= 0 ? 1e300 : std::max(worst[i], cs[i].us / best);
    }
    Choice c;
    c.by = "model (all-to-allv: worst ratio to the best over block sizes 64 B..1 MiB)";
    for (size_t i = 0; i < cands.size(); ++i) c.costs.push_back({cands[i].name, worst[i], ""});
    c.name = fastest(c.costs);
    return c;
  }

  TunerConstants k_;
  mutable std::mutex mu_;
  mutable std::map<std::pair<const HostLayout*, std::string>, Cached> cache_;
};

}  // namespace

std::unique_ptr<Tuner> makeModelTuner(const TunerConstants& constants) {
  return std::make_unique<ModelTuner>(constants);
}

std::string explainChoice(const CallShape& shape, const std::string& layout, const Choice& choice) {
  std::string out = std::string("tuner: ") + collName(shape.kind) + " " +
                    (shape.perPeerCounts ? std::string("(per-peer counts)") : std::to_string(shape.bytes) + " B") +
                    " " + dtypeName(shape.dtype) + ", " + std::to_string(shape.nranks) + " ranks on hosts " + layout +
                    ": " + choice.name + " (" + choice.by + ")";
  for (const CandidateCost& c : choice.costs) {
    char num[64];
    if (c.us < 0 || c.us >= 1e299)
      std::snprintf(num, sizeof num, "%12s", "-");
    else if (choice.by.find("ratio") != std::string::npos)
      std::snprintf(num, sizeof num, "%11.2fx", c.us);
    else
      std::snprintf(num, sizeof num, "%9.1f us", c.us);
    out += "\n  " + c.name + std::string(c.name.size() < 28 ? 28 - c.name.size() : 1, ' ') + num +
           (c.name == choice.name ? "  <- chosen" : "") + (c.cpuBound ? "  (CPU-bound: ranks share cores)" : "") +
           (c.error.empty() ? "" : "  (cannot plan: " + c.error + ")");
  }
  return out;
}

}  // namespace myriad
