// The cost-model tuner: plans every candidate for every rank of the call's shape, prices the schedules with
// predict() (cost_model.h) and picks the fastest. The answer is cached per shape (kind, bytes, dtype, chunk
// size, links, candidates) and communicator layout, so planning happens once per distinct shape and not on
// every call; each distinct shape is explained once under MYRIAD_DEBUG_SUBSYS=TUNE.
//
// Agreement: every input is a fact all ranks share (the shape, the layout, the settings), and the model is
// deterministic, so every rank chooses the same algorithm. All-to-allv has no size all ranks know; its
// choice is the candidate whose worst ratio to the best over a range of block sizes is smallest.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <memory>
#include <mutex>

#include "base/log.h"
#include "plan/dtype.h"
#include "tuner/cost_model.h"
#include "tuner/extrapolate.h"
#include "tuner/tuner.h"

namespace myriad {
namespace {

constexpr size_t kMaxCached = 4096;

// Pricing plans every rank's schedule of every candidate: time and memory grow with the ranks times the
// steps per rank (n^2 for the rings). Up to kMaxPricedRanks ranks a call is priced on its communicator.
// Beyond, it is priced on four nested cuts of it, each its first hosts (2^i times max(2, 16 / ranks of its
// first host): 16, 32, 64, 128 hosts of one rank, 2, 4, 8, 16 hosts of 8; a single host cut to 16, 32, 64,
// 128 ranks), at most kMaxCutRanks ranks (each candidate at the bytes that keep its largest message the
// full call's: chooseExtrapolated), and each candidate's price is extrapolated to the full count
// (extrapolate.h), so that crossovers that move with n (a ring's 2(n-1) steps against a tree's 2 log2 n)
// are seen. A layout without four such cuts (few hosts, or hosts of more than 16 ranks) is priced on its
// first hosts up to kMaxPricedRanks ranks, and that choice is used at the full size. Bounded either way
// (about 50 ms per shape), and the same on every rank.
constexpr int kMaxPricedRanks = 64;
constexpr int kMaxCutRanks = 256;
constexpr int kCuts = 4;
constexpr int kSmallestCutRanks = 16;

// The first `hosts` hosts of `layout` (fewer if the next would pass `maxRanks` ranks), each cut to
// `maxRanks` ranks, on their machines.
std::shared_ptr<const HostLayout> firstHosts(const HostLayout& layout, int hosts, int maxRanks) {
  std::vector<int> hostOf, cores;
  std::vector<std::string> machine;
  for (int h = 0; h < std::min(hosts, static_cast<int>(layout.hosts.size())); ++h) {
    const int size = std::min(static_cast<int>(layout.hosts[static_cast<size_t>(h)].size()), maxRanks);
    if (!hostOf.empty() && static_cast<int>(hostOf.size()) + size > maxRanks) break;
    const int m = layout.machineOfHost(h);
    hostOf.insert(hostOf.end(), static_cast<size_t>(size), h);
    machine.insert(machine.end(), static_cast<size_t>(size), std::to_string(m));
    cores.insert(cores.end(), static_cast<size_t>(size), layout.coresOf(m));
  }
  auto cut = HostLayout::fromHostOf(hostOf);
  return layout.machineOf.empty() ? cut : HostLayout::onMachines(*cut, machine, cores);
}

// The nested cuts a large layout is priced on, or none when it has not kCuts of them.
std::vector<std::shared_ptr<const HostLayout>> cutsOf(const HostLayout& layout) {
  std::vector<std::shared_ptr<const HostLayout>> cuts;
  const int hosts = static_cast<int>(layout.hosts.size());
  const int first = static_cast<int>(layout.hosts.front().size());
  for (int i = 0; i < kCuts; ++i) {
    const int want = hosts == 1 ? kSmallestCutRanks << i : std::max(2, kSmallestCutRanks / first) << i;
    auto cut = hosts == 1 ? firstHosts(layout, 1, want) : firstHosts(layout, want, kMaxCutRanks);
    if ((hosts == 1 ? cut->nranks() : static_cast<int>(cut->hosts.size())) != want) return {};
    cuts.push_back(std::move(cut));
  }
  return cuts;
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
    priced.rank = 0;
    Choice c;
    std::vector<std::shared_ptr<const HostLayout>> cuts;
    if (view.nranks() > kMaxPricedRanks && !shape.perPeerCounts) cuts = cutsOf(*view.layout);
    if (!cuts.empty()) {
      c = chooseExtrapolated(shape, priced, cuts, cands);
    } else {
      if (view.nranks() > kMaxPricedRanks) priced.layout = firstHosts(*view.layout, kMaxPricedRanks, kMaxPricedRanks);
      c = shape.perPeerCounts ? chooseUnsized(shape, priced, cands) : chooseAt(shape, shape.bytes, priced, cands);
      if (priced.layout != view.layout)
        c.by += " priced at " + std::to_string(priced.nranks()) + " ranks on hosts " + priced.layout->describe();
    }
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

  // The size a call sized by its whole vector (all-reduce, broadcast, reduce) is priced at on a cut of
  // `ranks` when it keeps its bytes per rank: a ring's chunks (S/n) are then the full call's. Any other
  // call keeps its size (it is sized per rank or per peer already).
  static size_t bytesPerRankKept(const CallShape& shape, int ranks) {
    switch (shape.kind) {
      case CollKind::kAllReduce:
      case CollKind::kBroadcast:
      case CollKind::kReduce: {
        const size_t es = dtypeSize(shape.dtype);
        const size_t elems = shape.bytes / es * static_cast<size_t>(ranks) / static_cast<size_t>(shape.nranks);
        return std::max<size_t>(elems, 1) * es;
      }
      default: return shape.bytes;
    }
  }

  // The largest message rank 0 sends in `cand`'s plan of `bytes` on `view` (0: it cannot plan).
  static size_t largestSend(const CallShape& shape, size_t bytes, const Candidate& cand, const CommView& view) {
    CommView v = view;
    v.rank = 0;
    auto s = cand.plan(argsOf(shape, bytes), v);
    size_t most = 0;
    if (s.isOk())
      for (const Schedule::StepInfo& st : s.value().steps())
        if (st.kind == Schedule::Kind::kSend) most = std::max(most, st.n);
    return most;
  }

  // Every candidate priced on each cut and extrapolated to the communicator's size. A cut is priced either
  // at the call's bytes or at its bytes per rank, whichever gives the messages that carry the bytes their
  // full-size size: each candidate's largest message (rank 0's plan at full size, cheap to plan alone)
  // against its largest on the largest cut. A ring's chunks S/n are kept by the bytes per rank, a
  // halving-doubling's S/2 by the bytes; pricing a ring's cut at the full bytes would see chunks 32x too
  // large at 4,096 ranks, bandwidth-bound where the full call is bound by per-message costs. A candidate
  // that cannot plan on a cut cannot be chosen (its error is the cut's).
  Choice chooseExtrapolated(const CallShape& shape, const CommView& view,
                            const std::vector<std::shared_ptr<const HostLayout>>& cuts,
                            std::span<const Candidate> cands) const {
    std::string hosts, ranks;
    for (const auto& cut : cuts) {
      hosts += (hosts.empty() ? "" : ", ") + std::to_string(cut->hosts.size());
      ranks += (ranks.empty() ? "" : ", ") + std::to_string(cut->nranks());
    }
    Choice c;
    c.by = "model, extrapolated from its first " + hosts + " hosts (" + ranks + " ranks)";
    const int largest = cuts.back()->nranks();
    for (const Candidate& cand : cands) {
      bool perRank = false;
      if (bytesPerRankKept(shape, largest) != shape.bytes) {
        CommView big = view;
        big.layout = cuts.back();
        const auto full = static_cast<double>(largestSend(shape, shape.bytes, cand, view));
        const auto same = static_cast<double>(largestSend(shape, shape.bytes, cand, big));
        const auto kept = static_cast<double>(largestSend(shape, bytesPerRankKept(shape, largest), cand, big));
        perRank = full > 0 && same > 0 && kept > 0 && std::abs(std::log(kept / full)) < std::abs(std::log(same / full));
      }
      std::vector<PricePoint> points;
      CandidateCost cost{cand.name, -1, ""};
      for (const auto& cut : cuts) {
        CommView v = view;
        v.layout = cut;
        const size_t bytes = perRank ? bytesPerRankKept(shape, cut->nranks()) : shape.bytes;
        cost = costs(shape, bytes, v, std::span<const Candidate>(&cand, 1)).front();
        if (cost.us >= 0) points.push_back({static_cast<double>(cut->nranks()), cost.us});
      }
      cost.us = points.size() == cuts.size() ? extrapolatePrice(points, view.nranks()) : -1;
      if (cost.us < 0 && cost.error.empty()) cost.error = "not priced on every cut";
      c.costs.push_back(std::move(cost));
    }
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
