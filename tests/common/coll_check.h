// Checked runs of every collective of the C API, for the bodies of forked ranks. A case fills this rank's
// input (reference.h: reduction inputs or the byte pattern), runs the call blocking or on a host stream, and
// compares the whole receive buffer -- results, gaps that must stay untouched, guard bytes past the end --
// with an image computed on the host. Invariant: every rank of a communicator runs the same cases in order.
#pragma once

#include <cstddef>
#include <cstdint>
#include <ostream>
#include <string>
#include <vector>

#include "myriad/myriad.h"

namespace myriad::test {

enum class Coll {
  kAllReduce,
  kBroadcast,
  kReduce,
  kAllGather,
  kReduceScatter,
  kAllToAll,
  kAllToAllv,
  kGather,
  kScatter,
  kBarrier
};
const char* collName(Coll coll);  // "allgather", as in MYRIAD_ALGO names
inline void PrintTo(Coll coll, std::ostream* os) {
  *os << collName(coll);
}

struct CollCase {
  Coll coll = Coll::kAllReduce;
  myrDataType_t type = myrFloat32;
  myrRedOp_t op = myrSum;  // reductions only
  // Elements per block: the count argument of the call (all-to-allv: the largest per-pair count).
  size_t count = 0;
  int root = 0;  // rooted collectives only
  bool inPlace = false;
};
std::string collCaseName(const CollCase& c);  // "reduce float sum count 1009 root 2 in-place"

// Runs one case and checks it; "" on success, else what went wrong (naming the case and the rank).
std::string runCollCase(myrComm_t comm, int rank, int nranks, const CollCase& c, myrStream_t stream, uint64_t salt);
// Runs cases in order with salts salt, salt + 1, ...; stops at the first failure.
std::string runCollCases(myrComm_t comm, int rank, int nranks, const std::vector<CollCase>& cases, myrStream_t stream,
                         uint64_t salt);

// The cases of one collective on nranks ranks: element sizes 1, 2, 4 and 8 (reductions: a spread of type x op),
// counts 0, 1, n - 1, 1009 and one large, in and out of place, every root at small counts.
// `quick` keeps one type and the counts 1 and 1009 (for tests that run many configurations).
std::vector<CollCase> collCases(Coll coll, int nranks, bool quick = false);

// All-to-allv layout of the whole communicator: counts[s * n + d] elements go from s to d; each rank's
// blocks sit in a rank-dependent order with gaps between them. symmetric: counts[s][d] == counts[d][s] and
// sdispls == rdispls (the in-place form). Roughly a quarter of the pairs get 0 elements.
struct AllToAllvLayout {
  int nranks = 0;
  std::vector<size_t> counts;                  // n * n
  std::vector<std::vector<size_t>> sdispls;    // [rank][peer]
  std::vector<std::vector<size_t>> rdispls;    // [rank][peer]
  std::vector<size_t> sendExtent, recvExtent;  // elements of each rank's buffers
};
AllToAllvLayout allToAllvLayout(int nranks, size_t maxCount, bool symmetric, uint64_t salt);

}  // namespace myriad::test
