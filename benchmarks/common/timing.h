// Timing of a batch of collective calls, and the numbers that must cross ranks (times, #wrong, host names),
// over RankOps: one rank of the library under test. The benchmarks have no side channel, so cross-rank
// numbers travel through that library's own all-reduce, blocking, only between timed loops.
#pragma once

#include <cstddef>
#include <functional>
#include <string>
#include <vector>

#include "benchmarks/common/collective.h"
#include "benchmarks/common/options.h"
#include "myriad/myriad.h"

namespace myriad::bench {

// One rank as the sweep sees it: Myriad's (bench_runner.cc) issues myr* calls on a host stream; a peer's
// (benchmarks/peers/) calls its library, blocking. Every method returns false with *error on a failure.
class RankOps {
 public:
  virtual ~RankOps() = default;
  virtual int rank() const = 0;
  virtual int nranks() const = 0;
  // Issues one call of the collective of the run; the error reads "call failed: ...".
  virtual bool call(const CollArgs& args, const void* send, void* recv, std::string* error) = 0;
  // Waits for every issued call (nothing to do for blocking calls).
  virtual bool sync(std::string* error) = 0;
  // Blocking in-place all-reduce of `count` doubles with op myrSum, myrMin or myrMax.
  virtual bool allReduceDoubles(double* values, size_t count, myrRedOp_t op, std::string* error) = 0;
  // -R 1: registers a buffer of the sweep with the library (Myriad: myrCommRegister) until
  // deregisterBuffers(); libraries without registration do nothing.
  virtual bool registerBuffer(void* p, size_t bytes, std::string* error) {
    (void)p, (void)bytes, (void)error;
    return true;
  }
  virtual void deregisterBuffers() {}
};

// "<call> failed: <result name>: <myrGetLastError(comm)>"
std::string callError(const char* call, myrResult_t result, myrComm_t comm);

// Runs `call` warmup times, then a one-element barrier, then `iters` times under a steady_clock, synchronised
// before the clock stops. *seconds: wall time per call.
bool timeCalls(RankOps& ops, int warmup, int iters, const std::function<bool(std::string* error)>& call,
               double* seconds, std::string* error);

// Combines one number per rank as -a says (rank 0's, the mean, min or max); the same result on every rank.
bool combineAcrossRanks(RankOps& ops, double value, Average how, double* combined, std::string* error);
// The sum over ranks.
bool sumAcrossRanks(RankOps& ops, double value, double* sum, std::string* error);

// Every rank's `bytes` bytes, rank r's at offset r * bytes, on every rank.
bool gatherBytes(RankOps& ops, const void* mine, size_t bytes, std::vector<unsigned char>* all, std::string* error);

}  // namespace myriad::bench
