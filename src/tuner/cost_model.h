// The cost model: a call's predicted time from the Schedules of all its ranks, and the bytes each link
// class carries. No rules per algorithm: whatever an algorithm plans is what is priced.
#pragma once

#include <array>
#include <cstdint>
#include <vector>

#include "plan/comm_view.h"
#include "plan/schedule.h"
#include "tuner/link_cost.h"

namespace myriad {

// The class of the link from rank `a` to rank `b` of `view`'s communicator: shm within a host (tcp with
// MYRIAD_DISABLE_SHM), between hosts rdma when the view says so, else tcp.
LinkClass linkBetween(const CommView& view, int a, int b);

struct Prediction {
  double us = 0;                                  // the critical path over all ranks (or cpuBoundUs), plus callUs
  double cpuBoundUs = 0;                          // an oversubscribed machine's CPU time over its cores (0: none)
  std::array<uint64_t, kLinkClasses> bytes{};     // bytes sent over each link class, all ranks together
  std::array<uint64_t, kLinkClasses> messages{};  // messages sent over each class
};

// `schedules[r]` is rank r's schedule of one call (a schedule's first stage only: the stage after
// Schedule::then depends on exchanged data). `view` gives the layout and the links; its rank is ignored.
Prediction predict(const std::vector<Schedule>& schedules, const CommView& view, const TunerConstants& k);

}  // namespace myriad
