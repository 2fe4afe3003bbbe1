// The calibration file (MYRIAD_TUNER_FILE): the cost model's constants as `key value` lines.
//
//   # comments and blank lines are ignored
//   shm.alpha_us 4.5     latency of a link class, µs (classes: see linkClassName)
//   shm.overhead_us 2    CPU time a message costs at each end, µs
//   shm.gbps 3.2         its streaming bandwidth, GB/s
//   reduce.gbps 2        reduction throughput of one rank, GB/s of the destination
//   copy.gbps 5          local copy throughput, GB/s
//   call_us 20           fixed cost of a call
//
// Keys left out keep their defaults; a key given twice, an unknown key, or a value that is not a positive
// number (call_us, latencies and overheads may be 0) is an error naming the file and the line.
#pragma once

#include <string>

#include "base/status.h"
#include "tuner/link_cost.h"

namespace myriad {

// `text` read from `fileName` (named in errors) over `base`.
Result<TunerConstants> parseTunerFile(const std::string& text, const std::string& fileName,
                                      const TunerConstants& base = TunerConstants::defaults());
// Reads and parses the file; an unreadable file is InvalidArgument naming it.
Result<TunerConstants> loadTunerFile(const std::string& path);
// Every constant, in the form parseTunerFile reads (what `myriad-info --tune-defaults` prints).
std::string writeTunerFile(const TunerConstants& k);

}  // namespace myriad
