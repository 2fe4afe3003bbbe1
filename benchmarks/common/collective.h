// The table of functions one collective's benchmark provides, in the shape of nccl-tests' per-collective
// tables; the driver (bench_runner.cc) knows nothing about a collective beyond it. Adding a collective is one
// file: a Collective value declared in collectives.h and named in perf_main.cc (see all_reduce_perf.cc).
#pragma once

#include <cstddef>
#include <cstdint>

#include "myriad/myriad.h"

namespace myriad::bench {

// Element counts of one message size, per rank.
struct CollCounts {
  size_t sendCount = 0;  // elements in sendbuff
  size_t recvCount = 0;  // elements in recvbuff
  size_t count = 0;      // the "count" column (the count argument of the call)
  // In place, as nccl-tests places it: sendbuff = recvbuff + rank * sendInPlaceOffset and recvbuff =
  // recvbuff + rank * recvInPlaceOffset (all-gather: sendbuff at the rank's block; reduce-scatter: recvbuff).
  size_t sendInPlaceOffset = 0;
  size_t recvInPlaceOffset = 0;
};

struct CollArgs {
  myrDataType_t type = myrFloat32;
  myrRedOp_t op = myrSum;
  int root = 0;
  int rank = 0;
  int nranks = 1;
  CollCounts counts;
};

struct Collective {
  const char* name;   // as in the file name and JSON: "all_reduce"
  bool hasOp;         // false: the redop column says "none"
  bool hasRoot;       // false: the root column says -1
  bool checkInPlace;  // false: in place is timed but not checked (#wrong N/A), as nccl-tests does for sendrecv
  // Counts for a message of `bytes` bytes of elements of `typeSize` bytes.
  CollCounts (*getCounts)(size_t bytes, size_t typeSize, int nranks);
  // Fills this rank's input for a checked run: into send (out of place) or into the in-place send area.
  void (*initData)(const CollArgs& args, void* send, uint64_t salt);
  // Number of elements of this rank's result that differ from what initData's inputs must give.
  size_t (*checkData)(const CollArgs& args, const void* recv, uint64_t salt);
  // Issues the call; with a NULL stream it blocks.
  myrResult_t (*run)(const CollArgs& args, const void* send, void* recv, myrComm_t comm, myrStream_t stream);
  // algbw = bytes / seconds / 1e9 (GB/s, as nccl-tests); busbw scales it to what each link carries.
  void (*getBw)(size_t bytes, double seconds, int nranks, double* algBw, double* busBw);
};

}  // namespace myriad::bench
