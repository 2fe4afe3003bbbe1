// runRanks: n ranks of one communicator as threads of this process, over an in-memory store. Each rank's
// body returns a Status-like string ("" = ok); failures are reported with the rank and the seed.
// runRankPairs gives every rank a second communicator on which MYRIAD_ALGO is unset (the tuner's choice).
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

struct RunOptions {
  std::string algo;         // forces algorithms, as MYRIAD_ALGO does (a comma list)
  std::vector<int> hostOf;  // rank -> host number (as MYRIAD_HOST_ID does); empty: all on one host
  size_t chunkBytes = 0;    // MYRIAD_CHUNK_BYTES for both communicators of runRankPairs; 0: as configured
};

// Creates the communicator on n threads, runs body(rank, comm) on each, destroys the communicators.
// Returns one result per rank; a rank whose init failed reports that.
std::vector<RankResult> runRanks(int n, const std::function<std::string(int rank, myrComm_t comm)>& body,
                                 const RunOptions& options);
inline std::vector<RankResult> runRanks(int n, const std::function<std::string(int rank, myrComm_t comm)>& body,
                                        const std::string& algo = "") {
  return runRanks(n, body, RunOptions{algo, {}, 0});
}

// As runRanks, with two communicators per rank over the same hosts: `forced` with options.algo, `tuned`
// without any MYRIAD_ALGO (so the tuner chooses, with its fallback).
using PairBody = std::function<std::string(int rank, myrComm_t forced, myrComm_t tuned)>;
std::vector<RankResult> runRankPairs(int n, const PairBody& body, const RunOptions& options);

// Host layouts for hierarchical tests: `sizes[h]` ranks on host h, ranks numbered host by host
// (blocked) or dealt round-robin over the hosts (interleaved).
std::vector<int> blockedHosts(const std::vector<int>& sizes);
std::vector<int> interleavedHosts(const std::vector<int>& sizes);

}  // namespace myriad::test
