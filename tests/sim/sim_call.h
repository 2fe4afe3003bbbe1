// SimCall: one collective call on every rank of a simulated communicator — each rank's buffers (canary-guarded,
// filled from tests/algo/buffers.h patterns or tests/common/reference.h inputs), its CollArgs as the C API
// would build them (in place, NULL for buffers the rank does not use), and the check of its result against
// the reference. Invariant: the check covers every byte the rank may not write (guards, unused buffers,
// the send buffer out of place), not only the result.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "plan/coll_args.h"
#include "tests/algo/buffers.h"

namespace myriad::sim {

struct SimCombo {
  size_t count = 0;
  myrDataType_t type = myrFloat32;
  myrRedOp_t op = myrSum;
  bool inPlace = false;
  int root = 0;
  uint64_t salt = 0;
  bool nullUnused = false;  // buffers a rank does not use are NULL (else canary that must stay untouched)
};
// "count 13 half max in place root 2"
std::string describe(const SimCombo& c, CollKind kind);
bool reduces(CollKind kind);
bool rooted(CollKind kind);
// Bytes of user buffers one rank holds for the call (to keep large cases small).
size_t bytesPerRank(CollKind kind, size_t count, myrDataType_t type, int nranks);

class SimCall {
 public:
  // `source` numbers this call's pattern sources (sources source .. source + nranks^2 are used).
  SimCall(CollKind kind, const SimCombo& combo, int nranks, const test::Pattern& pattern, int source);
  std::vector<CollArgs>& args() { return args_; }
  // "" or what is wrong with rank's buffers after the call.
  std::string check(int rank) const;
  // Every rank's buffers as they are (guards included), and back: a call run again on the same buffers
  // (a replayed graph) starts from the state it was set up in.
  std::vector<std::vector<uint8_t>> image();
  void restore(const std::vector<std::vector<uint8_t>>& image);

 private:
  struct Bufs {
    test::Guarded send, recv;
    std::vector<uint8_t> input;  // the send buffer before the call (out of place)
    bool sendUsed = true, recvUsed = true, sendResult = false;
  };
  void setUp(int rank);
  std::string checkResult(int rank, const uint8_t* out) const;

  CollKind kind_;
  SimCombo c_;
  int n_;
  size_t es_;
  const test::Pattern& pattern_;
  int source_;
  std::optional<test::PeriodicReduction> ref_;
  std::vector<Bufs> bufs_;
  std::vector<CollArgs> args_;
};

}  // namespace myriad::sim
