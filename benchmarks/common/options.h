// Command-line options of the perf binaries: nccl-tests' flags with nccl-tests' meanings and defaults,
// plus Myriad's own (-np, -A, -m, --floor-gbps, --json); the peer programs (benchmarks/peers/) add theirs through
// PeerFlags. Invariant: one Options value, filled once by parseOptions and passed down read-only; no globals.
#pragma once

#include <cstddef>
#include <functional>
#include <string>
#include <vector>

#include "myriad/myriad.h"

namespace CLI {
class App;
}

namespace myriad::bench {

// -a: how per-rank times are combined into the printed one (nccl-tests' numbering).
enum class Average { kRank0 = 0, kMean = 1, kMin = 2, kMax = 3 };

struct Options {
  size_t minBytes = size_t{32} << 20;            // -b
  size_t maxBytes = size_t{32} << 20;            // -e
  size_t stepBytes = size_t{1} << 20;            // -i, used when stepFactor <= 1
  int stepFactor = 1;                            // -f, multiplies the size when > 1
  int iters = 20;                                // -n
  int warmupIters = 5;                           // -w
  bool check = true;                             // -c
  std::vector<myrRedOp_t> ops{myrSum};           // -o
  std::vector<myrDataType_t> types{myrFloat32};  // -d
  int root = 0;                                  // -r; -1: every rank in turn
  bool blocking = false;                         // -z 1: NULL stream; 0: a host stream (host memory only)
  Average average = Average::kMean;              // -a
  int nranks = 0;                                // -np; 0: not given
  int hosts = 1;                                 // --hosts: forked ranks emulate this many hosts
  int blocks = 1;        // --blocks: out-of-place calls timed in this many blocks, the median block's time reported
  std::string algo;      // -A: exported as MYRIAD_ALGO before init; "a,b": paired
  std::string memory;    // -m host|cuda; "": cuda when built with CUDA and a GPU is
                         // present, else host (benchMain decides)
  double floorGbps = 0;  // --floor-gbps: > 0 adds the floor column
  std::string jsonPath;  // --json
  bool paths = false;    // --paths: print the network path telemetry
  bool registerBuffers = false;  // -R 1: myrCommRegister the buffers (Myriad only)
  std::string collective;        // peers only: the -c NAME of PeerFlags::collectives
};

// What a peer program adds to the shared flags: -c then also takes one of `collectives` (the call to
// time), given next to -c 0|1 (e.g. "-c allreduce -c 1"), and addFlags declares the peer's own flags.
struct PeerFlags {
  std::vector<std::string> collectives;
  std::function<void(CLI::App& app)> addFlags;
};

// Parses argv. Returns true with `options` filled, or false with *exitCode set (0 after --help, 2 after a
// bad flag); messages are already printed then.
// With `peer`, a -c NAME is required.
bool parseOptions(int argc, char** argv, Options* options, int* exitCode, const PeerFlags* peer = nullptr);

// "8", "64K", "128M", "1G" (powers of 1024, either case) → bytes; false on anything else.
bool parseSize(const std::string& text, size_t* bytes);

// Every message size of the sweep, from minBytes to maxBytes inclusive.
std::vector<size_t> sizeSweep(const Options& options);

}  // namespace myriad::bench
