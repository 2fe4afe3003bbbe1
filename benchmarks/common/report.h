// What rank 0 prints: nccl-tests' header, device lines, result table and footer, column for column, so
// scripts that parse nccl-tests output read ours; and the same rows as JSON lines for --json.
#pragma once

#include <cstddef>
#include <cstdio>
#include <string>
#include <vector>

#include "benchmarks/common/options.h"

namespace myriad::bench {

// One rank's device line; plain data so that it can be gathered as bytes.
struct RankDescription {
  int rank = 0;
  int pid = 0;
  char host[64] = {};
  int device = -1;  // the CUDA device of its buffers; -1: host memory
  char deviceName[64] = {};
};

struct RunDescription {
  std::string program;             // "myriad_all_reduce_perf"
  std::string collective;          // "all_reduce" (peers too, so rows of every library match)
  std::string library = "myriad";  // JSON "library": "myriad", "openmpi", "gloo"
  std::string title;               // the header's library and version: "Myriad 0.1.0", "Open MPI 4.1.4"
  std::string launcher;            // "fork", "ompi", ... (LaunchInfo::kind), "mpirun", "store"
  std::string algo;                // MYRIAD_ALGO, "" for the tuner's choice; a peer's variant ("ring")
  std::string memoryNote;          // -m cuda: "NVIDIA H200, 1 device"
  int nranks = 1;
};

struct ResultHalf {  // out-of-place or in-place
  double timeUs = 0;
  double algBw = 0;
  double busBw = 0;
  bool checked = false;  // -c 1
  double wrong = 0;      // summed over ranks
};

struct ResultRow {
  size_t bytes = 0;
  size_t count = 0;
  std::string type;
  std::string op;  // "none" for collectives without an operation
  int root = -1;
  ResultHalf outOfPlace;
  ResultHalf inPlace;
  double floorUs = -1;  // --floor-gbps: the time the bytes all ranks must read and write take; < 0: not asked
  std::string algo;     // -A a,b (paired): the algorithm of this row, printed last; else empty (the run's)
};

void printRunHeader(std::FILE* out, const Options& options, const RunDescription& run,
                    const std::vector<RankDescription>& ranks);
void printTableHeader(std::FILE* out, bool floor);
void printRow(std::FILE* out, const ResultRow& row);
void printFooter(std::FILE* out, double wrongTotal, double avgBusBw);

// One JSON object on one line.
void writeJsonRow(std::FILE* out, const RunDescription& run, const Options& options, const ResultRow& row);

}  // namespace myriad::bench
