// Timing of a batch of collective calls, and the numbers that must cross ranks (times, #wrong, host names).
// The benchmarks have no side channel (MPI is optional), so cross-rank numbers travel through myrAllReduce
// itself, blocking (NULL stream), only between timed loops and after the host stream has been synchronised.
#pragma once

#include <cstddef>
#include <functional>
#include <string>
#include <vector>

#include "benchmarks/common/options.h"
#include "myriad/myriad.h"

namespace myriad::bench {

struct RankContext {
  int rank = 0;
  int nranks = 1;
  myrComm_t comm = nullptr;
  myrStream_t stream = nullptr;  // NULL: blocking calls (-z 1)
};

// "<call> failed: <result name>: <myrGetLastError(comm)>"
std::string callError(const char* call, myrResult_t result, myrComm_t comm);

// Waits for everything issued on ctx.stream (nothing to do for blocking calls).
bool syncStream(const RankContext& ctx, std::string* error);

// Runs `call` warmup times, then a one-element barrier, then `iters` times under a steady_clock, the stream
// synchronised before the clock stops. *seconds: wall time per call.
bool timeCalls(const RankContext& ctx, int warmup, int iters, const std::function<myrResult_t()>& call, double* seconds,
               std::string* error);

// Combines one number per rank as -a says (rank 0's, the mean, min or max); the same result on every rank.
bool combineAcrossRanks(const RankContext& ctx, double value, Average how, double* combined, std::string* error);
// The sum over ranks.
bool sumAcrossRanks(const RankContext& ctx, double value, double* sum, std::string* error);

// Every rank's `bytes` bytes, rank r's at offset r * bytes, on every rank.
bool gatherBytes(const RankContext& ctx, const void* mine, size_t bytes, std::vector<unsigned char>* all,
                 std::string* error);

}  // namespace myriad::bench
