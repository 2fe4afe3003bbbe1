// Steady-state extrapolation: a call whose plans repeat one pattern thousands of times (a ring's 2(n-1)
// rounds, a tree's pipeline slices) is run with its periodic regions (periodic.h) cut short, at a few
// lengths, and its results are extrapolated linearly to the full length. Once a run has settled, every
// further block of a region adds the same time and the same bytes on each link, so the results are affine in
// the blocks kept; a last run at another length checks that (the residual).
//
// A ring phase whose rounds are long (a host's ring over slices of a lane block) is a grid (grid.h): it is cut
// by columns, the same slices out of every round, and extrapolated linearly in the columns kept; below,
// "blocks" are then its columns and its margin the columns a dependency moves on.
//
// Region k of every distinct plan shape is cut alike: the same number of blocks, ending the same number of
// blocks before the region's end, so that the two ends of every connection drop the same messages (checked
// per connection; a plan set where they would not is run in full). Cut short: base + extra blocks are kept
// beyond the margins each region needs (its longest dependency, at both ends). Runs: every region at `base`;
// then each region alone at base + `step`; the last with every region at base + 2 `step` (SteadyOptions),
// all scaled up in the first round until it keeps half a margin (a shorter run ends in its start-up).
// Where that check run disagrees with the extrapolation (the run has not settled within the kept blocks: a
// latency-bound ring's slowest chain of dependencies wraps around the ring only after n rounds), the kept
// blocks are doubled and the runs made again, while all the runs made stay shorter than the full plans; the
// last extrapolation is returned and the report says whether it settled. A run is made once: with one region
// (base = step), a round's first run is the round before's second. A round's runs are made `threads` at a time.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "base/status.h"
#include "tools/sim/plan_set.h"
#include "tools/sim/virtual_executor.h"

namespace myriad::netsim {

struct SteadyOptions {
  // Extra steps kept per region in the first run, and the increment between runs (each rounded up to whole
  // blocks, 2 at least).
  uint64_t baseSteps = 16, stepSteps = 16;
  uint64_t minSteps = 128;  // regions shorter than this are run in full
  // The check run must agree with the extrapolation this closely (relative time); until it does, the kept
  // blocks are doubled while all the runs made stay shorter than the full plans (myriad-sim's
  // --steady-tolerance).
  double settled = 5e-4;
  // Runs made at once: a round's runs are independent (myriad-sim's --threads; default: every core).
  unsigned threads = 1;
};

struct SteadyReport {
  bool used = false;              // false: run in full (why says why)
  std::string why;                // when not used
  int regions = 0;                // regions cut in every shape
  std::string shapes;             // the regions of the first shape, last first: "N blocks of P steps, margin M"
  int runs = 0;                   // distinct runs made
  uint64_t steps = 0;             // steps run over all runs (the full plan has PlanSet::steps())
  double residual = 0;            // the check run against its extrapolation, relative (time), in the last round
  std::vector<double> residuals;  // every round's, first to last
  bool settled = false;           // |residual| <= SteadyOptions::settled
  uint64_t first = 1;             // the first round kept this many times SteadyOptions' base blocks
  uint64_t kept = 0;              // the last round kept this many times SteadyOptions' base blocks
};

// Runs `plans` on `exec`, cut short and extrapolated where it pays (the plans have regions to cut), else in
// full. A failure of any run is returned as is.
Result<RunResult> runSteady(const VirtualExecutor& exec, const PlanSet& plans, const SteadyOptions& options,
                            SteadyReport* report);

}  // namespace myriad::netsim
