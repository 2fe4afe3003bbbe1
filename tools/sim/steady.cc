// runSteady: find the regions every shape shares, cut them at a few lengths, check that both ends of every
// connection drop the same messages, run, and extrapolate each result linearly in the blocks kept.
#include "tools/sim/steady.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <map>
#include <optional>
#include <set>
#include <thread>
#include <vector>

#include "tools/sim/grid.h"
#include "tools/sim/periodic.h"

namespace myriad::netsim {
namespace {

// Region k as every shape has it: the margin the widest needs and the fewest blocks any has. A grid
// (grid.h) is cut by columns: its blocks are its columns, its margin the columns kept either side of a cut.
struct Shared {
  uint64_t margin = 0, blocks = UINT64_MAX;
  uint64_t columns = 0;  // 0: a region cut by blocks
};

// A connection's two ends as shapes and slots: rank r (shape `from`) sends to its slot `out`, and its peer
// (shape `to`) receives from its slot `in`. The messages a cut drops depend on nothing else, so the distinct
// ones over all ranks are all there is to check.
struct Link {
  uint32_t from, out, to, in;
  bool operator==(const Link&) const = default;
};

class Cutter {
 public:
  Cutter(const PlanSet& plans, std::vector<std::vector<PeriodicRegion>> regions, std::vector<std::vector<Grid>> grids,
         std::vector<Shared> shared)
      : plans_(plans), regions_(std::move(regions)), grids_(std::move(grids)), shared_(std::move(shared)) {
    for (int r = 0; r < plans_.nranks(); ++r)
      for (uint32_t q = 0; q < plans_.slots(r); ++q) {
        const int p = plans_.peer(r, q);
        uint32_t back = 0;
        while (back < plans_.slots(p) && plans_.peer(p, back) != r) ++back;
        const Link l{plans_.shapeId(r), q, plans_.shapeId(p), back};
        if (std::find(links_.begin(), links_.end(), l) == links_.end()) links_.push_back(l);
      }
  }

  uint64_t fullExtra(size_t k) const { return shared_[k].blocks - 2 * shared_[k].margin; }

  // Chooses each shape's shift in each region (shapes in order, the first shift that agrees with the shapes
  // chosen before it on every connection between them), cutting `extra` blocks beyond the margins; an error
  // names a connection whose ends cannot agree.
  Status align(const std::vector<uint64_t>& extra) {
    shift_.assign(regions_.size(), std::vector<uint32_t>(shared_.size(), 0));
    for (size_t k = 0; k < shared_.size(); ++k)
      for (uint32_t s = 0; s < regions_.size(); ++s) {
        bool agreed = false;
        for (uint32_t o = 0; o < regions_[s][k].period && !agreed; ++o) {
          shift_[s][k] = o;
          agreed = disagreement(k, extra, s).empty();
        }
        if (!agreed) return notSupported(disagreement(k, extra, s));
      }
    return Status::ok();
  }

  // The plans with region k keeping extra[k] blocks beyond its margins (after align).
  Result<PlanSet> cut(const std::vector<uint64_t>& extra) const {
    for (size_t k = 0; k < shared_.size(); ++k)
      if (std::string why = disagreement(k, extra, static_cast<uint32_t>(regions_.size())); !why.empty())
        return notSupported(why);
    std::vector<PlanShape> shapes;
    for (uint32_t s = 0; s < regions_.size(); ++s) {
      std::vector<BlockCut> all, cuts;
      for (size_t k = 0; k < shared_.size(); ++k)
        for (const BlockCut& c : cutsOf(s, k, extra[k]))
          if (c.blocks > 0) all.push_back(c);
      // A grid's row inside a cut of whole passes goes with them.
      for (const BlockCut& c : all)
        if (std::none_of(all.begin(), all.end(), [&](const BlockCut& o) {
              return &o != &c && o.from() <= c.from() && c.to() <= o.to() && o.to() - o.from() > c.to() - c.from();
            }))
          cuts.push_back(c);
      std::sort(cuts.begin(), cuts.end(), [](const BlockCut& a, const BlockCut& b) { return a.from() < b.from(); });
      for (size_t c = 1; c < cuts.size(); ++c)
        if (cuts[c].from() < cuts[c - 1].to())
          return notSupported("a cut of columns would cross a cut of passes (steps " + std::to_string(cuts[c].from()) +
                              " and " + std::to_string(cuts[c - 1].to()) + ")");
      shapes.push_back(cutShape(plans_.shapeAt(s), cuts));
    }
    return plans_.withShapes(std::move(shapes));
  }

 private:
  // Region k of shape s keeping `extra` blocks (a grid: columns) beyond its margins.
  std::vector<BlockCut> cutsOf(uint32_t s, size_t k, uint64_t extra) const {
    const uint64_t keep = 2 * shared_[k].margin + extra;
    if (shared_[k].columns > 0)
      return columnCuts(grids_[s][k], shared_[k].blocks - keep, shared_[k].margin, shift_[s][k]);
    return {BlockCut{regions_[s][k], shared_[k].blocks - keep, shared_[k].margin, shift_[s][k]}};
  }
  // The messages a cut of region k drops on one slot of shape s, cut by cut.
  std::vector<OrdinalRange> removed(uint32_t s, size_t k, uint64_t extra, uint32_t slot, bool sends) const {
    const PlanShape& shape = plans_.shapeAt(s);
    const bool has = slot < (sends ? shape.sendsTo.size() : shape.recvsFrom.size());
    std::vector<OrdinalRange> out;
    for (const BlockCut& c : cutsOf(s, k, extra))
      out.push_back(has ? removedMessages(shape, c, slot, sends) : OrdinalRange{});
    return out;
  }
  // Why the connections between shapes below `upTo` (and `upTo` itself) would drop different messages in
  // region k, or "".
  std::string disagreement(size_t k, const std::vector<uint64_t>& extra, uint32_t upTo) const {
    for (const Link& l : links_) {
      if (l.from > upTo || l.to > upTo) continue;
      const std::vector<OrdinalRange> out = removed(l.from, k, extra[k], l.out, true);
      const std::vector<OrdinalRange> in = removed(l.to, k, extra[k], l.in, false);
      if (out == in) continue;
      for (size_t c = 0; c < std::max(out.size(), in.size()); ++c) {
        const OrdinalRange o = c < out.size() ? out[c] : OrdinalRange{}, i = c < in.size() ? in[c] : OrdinalRange{};
        if (!(o == i))
          return "a cut would drop messages " + std::to_string(o.first) + "-" + std::to_string(o.last) +
                 " at one end of a connection and " + std::to_string(i.first) + "-" + std::to_string(i.last) +
                 " at the other";
      }
    }
    return "";
  }

  const PlanSet& plans_;
  std::vector<std::vector<PeriodicRegion>> regions_;  // per shape
  std::vector<std::vector<Grid>> grids_;              // per shape, beside regions_ (columns 0: not a grid)
  std::vector<Shared> shared_;                        // per region
  std::vector<Link> links_;
  std::vector<std::vector<uint32_t>> shift_;  // per shape and region
};

// The runs of the cut plans by the blocks each region keeps beyond its margins, each made once, up to
// `threads` at a time (every run is its own VirtualExecutor::run over its own cut PlanSet).
class CutRuns {
 public:
  CutRuns(const VirtualExecutor& exec, const Cutter& cutter, unsigned threads, SteadyReport& rep)
      : exec_(exec), cutter_(cutter), threads_(std::max(1u, threads)), rep_(rep) {}

  size_t missing(const std::vector<std::vector<uint64_t>>& extras) const {
    std::set<std::vector<uint64_t>> todo;
    for (const auto& e : extras)
      if (!done_.count(e)) todo.insert(e);
    return todo.size();
  }

  // Makes every run of `extras` not made yet; the first failure (in the order given) is returned.
  Status make(const std::vector<std::vector<uint64_t>>& extras) {
    std::vector<std::vector<uint64_t>> todo;
    std::vector<PlanSet> cut;
    for (const auto& e : extras) {
      if (done_.count(e) || std::find(todo.begin(), todo.end(), e) != todo.end()) continue;
      MYR_ASSIGN_OR_RETURN(PlanSet c, cutter_.cut(e));
      ++rep_.runs, rep_.steps += c.steps();
      todo.push_back(e), cut.push_back(std::move(c));
    }
    // Longest first: the threads then finish close together.
    std::vector<size_t> order(todo.size());
    for (size_t j = 0; j < order.size(); ++j) order[j] = j;
    std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return cut[a].steps() > cut[b].steps(); });
    std::vector<std::optional<Result<RunResult>>> out(todo.size());
    std::atomic<size_t> next{0};
    auto worker = [&] {
      for (size_t j; (j = next.fetch_add(1)) < todo.size();) out[order[j]].emplace(exec_.run(cut[order[j]]));
    };
    std::vector<std::thread> pool;
    for (size_t t = 1; t < std::min<size_t>(threads_, todo.size()); ++t) pool.emplace_back(worker);
    worker();
    for (std::thread& t : pool) t.join();
    for (size_t j = 0; j < todo.size(); ++j) {
      if (!out[j]->isOk()) return out[j]->status();
      done_.emplace(todo[j], std::move(out[j]->value()));
    }
    return Status::ok();
  }

  const RunResult& at(const std::vector<uint64_t>& extra) const { return done_.at(extra); }

 private:
  const VirtualExecutor& exec_;
  const Cutter& cutter_;
  unsigned threads_;
  SteadyReport& rep_;
  std::map<std::vector<uint64_t>, RunResult> done_;
};

// a + (b - a) * w, elementwise.
template <typename T>
void addScaled(std::vector<double>& acc, const std::vector<T>& b, const std::vector<T>& a, double w) {
  for (size_t i = 0; i < acc.size() && i < a.size() && i < b.size(); ++i)
    acc[i] += (static_cast<double>(b[i]) - static_cast<double>(a[i])) * w;
}

template <typename T>
std::vector<double> asDouble(const std::vector<T>& v) {
  return std::vector<double>(v.begin(), v.end());
}

// base + sum_k (runs[k] - base) * weights[k], field by field (windows: the widest of all runs).
RunResult extrapolate(const RunResult& base, const std::vector<RunResult>& runs, const std::vector<double>& weights) {
  RunResult out = base;
  double seconds = base.seconds, messages = static_cast<double>(base.messages), flows = static_cast<double>(base.flows);
  double rerates = static_cast<double>(base.rerates), rounds = static_cast<double>(base.rerateRounds);
  double rflows = static_cast<double>(base.rerateFlows), rlinks = static_cast<double>(base.rerateLinks);
  std::vector<double> finish = asDouble(base.rankFinish), bytes = asDouble(base.linkBytes),
                      spine = asDouble(base.spineFlows);
  for (size_t k = 0; k < runs.size(); ++k) {
    const RunResult& r = runs[k];
    const double w = weights[k];
    auto lin = [&](double& acc, double x, double b) { acc += (x - b) * w; };
    lin(seconds, r.seconds, base.seconds);
    lin(messages, static_cast<double>(r.messages), static_cast<double>(base.messages));
    lin(flows, static_cast<double>(r.flows), static_cast<double>(base.flows));
    lin(rerates, static_cast<double>(r.rerates), static_cast<double>(base.rerates));
    lin(rounds, static_cast<double>(r.rerateRounds), static_cast<double>(base.rerateRounds));
    lin(rflows, static_cast<double>(r.rerateFlows), static_cast<double>(base.rerateFlows));
    lin(rlinks, static_cast<double>(r.rerateLinks), static_cast<double>(base.rerateLinks));
    addScaled(finish, r.rankFinish, base.rankFinish, w);
    addScaled(bytes, r.linkBytes, base.linkBytes, w);
    addScaled(spine, r.spineFlows, base.spineFlows, w);
    out.stepWindow = std::max(out.stepWindow, r.stepWindow);
    out.messageWindow = std::max(out.messageWindow, r.messageWindow);
  }
  auto count = [](double v) { return static_cast<uint64_t>(std::llround(std::max(0.0, v))); };
  out.seconds = seconds;
  out.messages = count(messages), out.flows = count(flows), out.rerates = count(rerates);
  out.rerateRounds = count(rounds), out.rerateFlows = count(rflows), out.rerateLinks = count(rlinks);
  out.rankFinish = finish, out.linkBytes = bytes;
  for (size_t i = 0; i < out.spineFlows.size(); ++i) out.spineFlows[i] = static_cast<int>(std::lround(spine[i]));
  return out;
}

}  // namespace

Result<RunResult> runSteady(const VirtualExecutor& exec, const PlanSet& plans, const SteadyOptions& opt,
                            SteadyReport* report) {
  SteadyReport local;
  SteadyReport& rep = report ? *report : local;
  rep = SteadyReport{};
  auto full = [&](std::string why) {
    rep.why = std::move(why);
    rep.runs = 1, rep.steps = plans.steps();
    return exec.run(plans);
  };
  if (std::string why = exec.notCuttable(); !why.empty()) return full(why);
  // Region k of every shape, when every shape has as many.
  std::vector<std::vector<PeriodicRegion>> regions;
  std::vector<std::vector<Grid>> grids(plans.shapes());
  for (size_t s = 0; s < plans.shapes(); ++s)
    regions.push_back(withGrids(plans.shapeAt(s), periodicRegions(plans.shapeAt(s), opt.minSteps), opt.baseSteps,
                                opt.stepSteps, &grids[s]));
  const size_t found = regions.empty() ? 0 : regions.front().size();
  if (found == 0) return full("no periodic region of " + std::to_string(opt.minSteps) + " steps");
  for (size_t s = 0; s < regions.size(); ++s) {
    if (regions[s].size() != found) return full("the plans' shapes have different numbers of periodic regions");
    for (size_t i = 0; i < found; ++i)
      if (grids[s][i].columns != grids.front()[i].columns || grids[s][i].rows.size() != grids.front()[i].rows.size())
        return full("the plans' shapes have different grids of rounds");
  }
  std::vector<Shared> shared(found);
  for (size_t i = 0; i < found; ++i) shared[i].columns = grids.front()[i].columns;
  for (const auto& rs : regions)
    for (size_t i = 0; i < found; ++i) {
      shared[i].margin = std::max(shared[i].margin, rs[i].margin());
      shared[i].blocks = shared[i].columns > 0 ? shared[i].columns : std::min(shared[i].blocks, rs[i].blocks);
    }
  // Each cut must remove at least a margin's worth of blocks at every length run; shorter regions run in full.
  std::vector<uint64_t> base, step;  // per region, in blocks
  for (size_t i = shared.size(); i-- > 0;) {
    const uint64_t period = blockSteps(regions.front()[i], grids.front()[i]);
    const bool grid = grids.front()[i].columns > 0;
    const uint64_t b = blocksOf(opt.baseSteps, period, grid), d = blocksOf(opt.stepSteps, period, grid);
    const bool keep = shared[i].blocks >= 3 * shared[i].margin + b + 2 * d;
    if (keep) base.insert(base.begin(), b), step.insert(step.begin(), d);
    const PeriodicRegion& r = regions.front()[i];
    rep.shapes += (rep.shapes.empty() ? "" : "; ") +
                  (shared[i].columns > 0 ? std::to_string(grids.front()[i].rows.size()) + " rows of " +
                                               std::to_string(shared[i].columns) + " columns"
                                         : std::to_string(shared[i].blocks) + " blocks") +
                  " of " + std::to_string(r.period) + " steps, margin " + std::to_string(shared[i].margin) +
                  (keep ? "" : " (too short)");
    if (keep) continue;
    shared.erase(shared.begin() + static_cast<long>(i));
    for (auto& r : regions) r.erase(r.begin() + static_cast<long>(i));
    for (auto& g : grids) g.erase(g.begin() + static_cast<long>(i));
  }
  const size_t k = shared.size();
  if (k == 0) return full("no periodic region is long enough beside its dependencies: " + rep.shapes);
  // A grid whose rows run through passes that are cut too: the runs extrapolate in both and in their product
  // (a pass's time is affine in the columns kept, so the call's is bilinear in passes and columns).
  std::vector<std::pair<size_t, size_t>> pairs;  // (grid, passes)
  for (size_t i = 0; i < k; ++i)
    for (size_t j = 0; j < k; ++j)
      if (grids.front()[i].passes.blocks > 0 && grids.front()[j].columns == 0 &&
          regions.front()[j].start == grids.front()[i].passes.start &&
          regions.front()[j].period == grids.front()[i].passes.period)
        pairs.emplace_back(i, j);
  Cutter cutter(plans, std::move(regions), std::move(grids), shared);
  if (Status s = cutter.align(base); !s.isOk()) return full(s.message());
  // Only a grid cut beside its passes nests cuts, which could cross (other cuts are apart by construction).
  if (!pairs.empty())
    if (auto probe = cutter.cut(base); !probe.isOk()) return full(probe.status().message());
  CutRuns runs(exec, cutter, opt.threads, rep);
  // Longer and longer cuts (the kept blocks doubled each time) until the check run agrees with the
  // extrapolation, or a longer cut would not pay. The runs of a round at `times`: every region at b, each
  // region alone d further, and the check with every region 2d further (b and d: base and step, scaled).
  auto roundAt = [&](uint64_t times) {
    std::vector<uint64_t> b = base;
    for (uint64_t& x : b) x *= times;
    std::vector<std::vector<uint64_t>> extras{b};
    for (size_t i = 0; i < k; ++i) extras.push_back(b), extras.back()[i] += step[i] * times;
    for (auto [g, p] : pairs) {
      extras.push_back(b);
      extras.back()[g] += step[g] * times, extras.back()[p] += step[p] * times;
    }
    extras.push_back(b);
    for (size_t i = 0; i < k; ++i) extras.back()[i] += 2 * step[i] * times;
    return extras;
  };
  // A round at `times` pays when its regions still have blocks to remove and the steps of every run so far
  // and of its runs not made yet (none longer than its check run) stay below the full plans' steps: the cut
  // never costs more than one full run. (With one region and base = step, a round's first run is the round
  // before's second.)
  auto fits = [&](uint64_t times) -> Result<bool> {
    const std::vector<std::vector<uint64_t>> extras = roundAt(times);
    for (size_t i = 0; i < k; ++i)
      if (shared[i].blocks < 3 * shared[i].margin + extras.back()[i]) return false;
    MYR_ASSIGN_OR_RETURN(PlanSet probe, cutter.cut(extras.back()));
    return rep.steps + probe.steps() * runs.missing(extras) <= plans.steps();
  };
  // The first round keeps at least half a margin of blocks beyond the margins: a run that keeps fewer ends
  // in its start-up transient, which lasts about as long as the region's longest dependency (a tree's slice
  // climbs about a margin's worth of slices ahead of its way down), and the check of its round fails. Fewer
  // where that would not pay.
  uint64_t first = 1;
  for (size_t i = 0; i < k; ++i)
    while (2 * base[i] * first < shared[i].margin) first *= 2;
  for (;;) {
    MYR_ASSIGN_OR_RETURN(bool pays, fits(first));
    if (pays) break;
    if (first == 1) return full("the cut plans would keep too much to pay: " + rep.shapes);
    first /= 2;
  }
  rep.first = first;
  RunResult best;
  for (uint64_t times = first;; times *= 2) {
    const std::vector<std::vector<uint64_t>> extras = roundAt(times);
    MYR_TRY(runs.make(extras));
    const RunResult& at0 = runs.at(extras.front());
    std::vector<RunResult> alone;
    std::vector<double> weights, checkWeights;
    for (size_t i = 0; i < k; ++i) {
      alone.push_back(runs.at(extras[1 + i]));
      const uint64_t b = extras.front()[i], d = extras[1 + i][i] - b;
      weights.push_back(static_cast<double>(cutter.fullExtra(i) - b) / static_cast<double>(d));
      checkWeights.push_back(2.0);
    }
    // A pair's product term w_g w_p (r_gp - r_g - r_p + r_0), as a run of its own and a share off each alone.
    for (size_t q = 0; q < pairs.size(); ++q) {
      const auto [g, p] = pairs[q];
      alone.push_back(runs.at(extras[1 + k + q]));
      const double w = weights[g] * weights[p];
      weights[g] -= w, weights[p] -= w, weights.push_back(w);
      checkWeights[g] -= 4, checkWeights[p] -= 4, checkWeights.push_back(4);
    }
    const RunResult& check = runs.at(extras.back());
    const double predicted = extrapolate(at0, alone, checkWeights).seconds;
    rep.residual = check.seconds > 0 ? (check.seconds - predicted) / check.seconds : 0;
    rep.residuals.push_back(rep.residual);
    rep.used = true, rep.regions = static_cast<int>(k), rep.kept = times;
    best = extrapolate(at0, alone, weights);
    rep.settled = std::abs(rep.residual) <= opt.settled;
    if (rep.settled) break;
    MYR_ASSIGN_OR_RETURN(bool longer, fits(2 * times));
    if (!longer) break;
  }
  return best;
}

}  // namespace myriad::netsim
