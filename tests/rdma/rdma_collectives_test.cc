// Every collective over the rdma transport between forked processes on Soft-RoCE (rxe1/rxe2 on a veth
// pair, inside the VM of tests/rdma/vm): 2-4 ranks x 1-4 QPs per peer, blocking and on a host stream,
// checked against tests/common's host-side images. Outside the VM (no RXE_READY) the tests skip, saying so.
#include <gtest/gtest.h>

#include <chrono>
#include <string>
#include <tuple>
#include <vector>

#include "myriad/myriad.h"
#include "tests/common/coll_check.h"
#include "tests/common/fork_ranks.h"
#include "tests/common/mp_helpers.h"
#include "tests/rdma/rdma_env.h"

namespace myriad::test {
namespace {

using namespace std::chrono_literals;

struct RdmaParam {
  Coll coll;
  int nranks;
  int qps;
  bool quick;  // one type, counts 1 and 1009 (collCases' quick set)
};

std::string paramName(const testing::TestParamInfo<RdmaParam>& info) {
  const RdmaParam& p = info.param;
  return std::string(collName(p.coll)) + "_n" + std::to_string(p.nranks) + "_qp" + std::to_string(p.qps) +
         (p.quick ? "_quick" : "");
}

class RdmaCollectives : public testing::TestWithParam<RdmaParam> {};

TEST_P(RdmaCollectives, MatchesReference) {
  if (!rxeReady()) GTEST_SKIP() << "needs Soft-RoCE devices rxe1/rxe2 (run inside tests/rdma/vm/run-in-vm --rxe)";
  const RdmaParam p = GetParam();
  const uint64_t seed = testSeed();
  const std::vector<CollCase> cases = collCases(p.coll, p.nranks, p.quick);
  auto body = [&](int rank, const myrUniqueId& id) -> int {
    useRdma(rank, p.qps);
    const bool hostStream = (seed & 1) != 0;  // the same on every rank
    return runInChild(p.nranks, rank, id, hostStream, [&](myrComm_t comm, myrStream_t stream) {
      return runCollCases(comm, rank, p.nranks, cases, stream, seed);
    });
  };
  const ForkOutcome out = forkRanks(p.nranks, body, 240s, seed);
  ASSERT_TRUE(out.allSucceeded()) << out.describeFailures();
}

std::vector<RdmaParam> params() {
  std::vector<RdmaParam> v;
  const Coll all[] = {Coll::kAllReduce, Coll::kBroadcast, Coll::kReduce, Coll::kAllGather, Coll::kReduceScatter,
                      Coll::kAllToAll,  Coll::kAllToAllv, Coll::kGather, Coll::kScatter,   Coll::kBarrier};
  // Every collective with its full case list on 3 ranks and 2 QPs per peer ...
  for (Coll c : all) v.push_back({c, 3, 2, false});
  // ... and the rank x QP grid on the quick cases.
  for (Coll c : {Coll::kAllReduce, Coll::kAllToAll, Coll::kBroadcast})
    for (int n : {2, 4})
      for (int q : {1, 4}) v.push_back({c, n, q, true});
  return v;
}

INSTANTIATE_TEST_SUITE_P(Rxe, RdmaCollectives, testing::ValuesIn(params()), paramName);

// What ran: after an all-reduce the peer is reached over rdma, from this rank's device to the peer's, on
// the QPs asked for (plus the spares), ready; not over tcp or shm.
TEST(RdmaWhatRan, PeersAreReachedOverRdmaQps) {
  if (!rxeReady()) GTEST_SKIP() << "needs Soft-RoCE devices rxe1/rxe2 (run inside tests/rdma/vm/run-in-vm --rxe)";
  constexpr int kQps = 3;
  auto body = [&](int rank, const myrUniqueId& id) -> int {
    useRdma(rank, kQps);
    return runInChild(2, rank, id, false, [&](myrComm_t comm, myrStream_t stream) -> std::string {
      std::string err = runAllReduceCase(comm, rank, 2, {myrFloat32, myrSum, 1 << 18, false}, stream, 5);
      if (!err.empty()) return err;
      const std::string text = debugPeers(comm);
      const std::string line = peerLine(text, 1 - rank);
      const std::string mine = rank == 0 ? "rxe1" : "rxe2", theirs = rank == 0 ? "rxe2" : "rxe1";
      if (line.rfind("rdma: ", 0) != 0) return "the peer is not reached over rdma: " + text;
      if (line.find(" via " + mine + ":1 -> " + theirs) == std::string::npos)
        return "not " + mine + " to " + theirs + ": " + line;
      const size_t qps = line.find(" RC QPs");
      const size_t from = line.rfind(", ", qps);
      if (qps == std::string::npos || from == std::string::npos ||
          std::stoi(line.substr(from + 2, qps - from - 2)) < kQps)
        return "fewer than " + std::to_string(kQps) + " QPs: " + line;
      if (line.find(", ready") == std::string::npos) return "the connection is not ready: " + line;
      return "";
    });
  };
  const ForkOutcome out = forkRanks(2, body, 120s, testSeed());
  ASSERT_TRUE(out.allSucceeded()) << out.describeFailures();
}

}  // namespace
}  // namespace myriad::test
