// ControlLoop (see control.h): EWMAs, the relative badness test, and the re-path choice.
#include "transports/multipath/control.h"

#include <algorithm>

namespace myriad::mp {
namespace {
// In linear time (a round's service samples are many): the upper middle by selection, the lower middle as
// the largest of the half below it.
double median(std::vector<double> v) {
  if (v.empty()) return 0;
  const auto mid = v.begin() + static_cast<std::ptrdiff_t>(v.size() / 2);
  std::nth_element(v.begin(), mid, v.end());
  if (v.size() % 2) return *mid;
  return (*std::max_element(v.begin(), mid) + *mid) / 2;
}
}  // namespace

const PathView* ControlLoop::view(int slot) const {
  auto it = views_.find(slot);
  return it == views_.end() ? nullptr : &it->second;
}

double ControlLoop::siblingsMedian(int slot, const std::vector<PathRound>& paths, bool activeOnly) const {
  std::vector<double> v;
  for (const PathRound& r : paths) {
    if (r.slot == slot || (activeOnly && !r.active)) continue;
    const PathView* pv = view(r.slot);
    if (pv && pv->samples >= 2) v.push_back(pv->service);
  }
  return median(v);
}

int ControlLoop::round(const std::vector<PathRound>& paths, double seconds) {
  ++rounds_;
  double total = 0;
  int actives = 0;
  for (const PathRound& r : paths) {
    PathView& v = views_[r.slot];
    double tput = seconds > 0 ? static_cast<double>(r.bytes) / seconds : 0;
    v.throughput = v.samples == 0 ? tput : (1 - p_.alpha) * v.throughput + p_.alpha * tput;
    if (!r.serviceSec.empty()) {
      double s = median(r.serviceSec);
      v.service = v.samples == 0 ? s : (1 - p_.alpha) * v.service + p_.alpha * s;
      ++v.samples;
    }
    if (r.active) {
      total += tput;
      ++actives;
    }
  }
  peer_ = rounds_ == 1 ? total : (1 - p_.alpha) * peer_ + p_.alpha * total;
  peak_ = std::max(peak_, peer_);

  int worst = -1;
  double worstRatio = 0;
  for (const PathRound& r : paths) {
    if (!r.active) continue;
    PathView& v = views_[r.slot];
    bool bad = false;
    double ratio = 0;
    if (v.samples >= p_.judgeAfterSamples) {
      double sib = siblingsMedian(r.slot, paths, true);
      if (sib > 0 && v.service > p_.latencyFactor * sib) bad = true, ratio = v.service / sib;
      for (const PathRound& s : paths) {  // a spare scout that shows a clearly faster path exists
        const PathView* sv = view(s.slot);
        if (s.active || !sv || sv->samples < 2 || sv->service <= 0) continue;
        if (v.service > p_.latencyFactor * sv->service) bad = true, ratio = std::max(ratio, v.service / sv->service);
      }
      double share = actives > 0 ? peer_ / actives : 0;
      if (actives > 1 && peer_ < p_.lineFraction * peak_ && v.throughput < p_.shareFactor * share)
        bad = true, ratio = std::max(ratio, share / std::max(v.throughput, 1.0));
    }
    v.lastBad = bad;
    v.bad = bad ? v.bad + 1 : 0;
    if (v.bad >= p_.badRounds && ratio > worstRatio) worst = r.slot, worstRatio = ratio;
  }
  if (holdDown_ > 0) {
    --holdDown_;
    return -1;
  }
  if (beforeRepath_ >= 0) {  // the last re-path's hold-down is over: did it help?
    judge(peer_ >= p_.gainFactor * beforeRepath_);
    beforeRepath_ = -1;
  }
  if (worst < 0) return -1;
  if (std::bernoulli_distribution(p_.repathProbability)(rng_) == false) return -1;
  holdDown_ = holdDownNow();
  beforeRepath_ = peer_;
  views_[worst].bad = 0;
  return worst;
}

void ControlLoop::judge(bool helped) {
  misses_ = helped ? 0 : misses_ + 1;
  backoff_ = std::min(misses_ / 2, p_.maxBackoff);
}

void ControlLoop::declined() {
  beforeRepath_ = -1;
  judge(false);
  holdDown_ = holdDownNow();
}

bool ControlLoop::stalled(int slot, double ageSec) const {
  std::vector<double> v;
  for (const auto& [s, pv] : views_)
    if (s != slot && pv.samples >= 2) v.push_back(pv.service);
  double sib = median(v);
  return sib > 0 && ageSec > p_.stallMinSec && ageSec > p_.stallFactor * sib;
}

}  // namespace myriad::mp
