// runRanks: n ranks of one communicator as threads of this process, over an in-memory store. Each rank's
// body returns a Status-like string ("" = ok); failures are reported with the rank and the seed.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "myriad/myriad.h"

namespace myriad::test {

struct RankResult {
  int rank = 0;
  std::string error;  // empty when the body succeeded
};

// Creates the communicator on n threads, runs body(rank, comm) on each, destroys the communicators.
// Returns one result per rank; a rank whose init failed reports that.
// `algo`, when set, forces that algorithm (as MYRIAD_ALGO does).
std::vector<RankResult> runRanks(int n, const std::function<std::string(int rank, myrComm_t comm)>& body,
                                 const std::string& algo = "");

}  // namespace myriad::test
