// Every collective other than all-reduce (all_reduce_mp_test.cc) across forked processes: shm and tcp,
// 2..5 ranks, blocking and on a host stream, in and out of place, every root at small counts, against the
// host-side images of tests/common/coll_check. One communicator per test runs all cases of one collective,
// with the tuner's choice of algorithm (hier_mp_test.cc forces each algorithm).
#include <gtest/gtest.h>

#include <chrono>
#include <string>
#include <tuple>
#include <vector>

#include "myriad/myriad.h"
#include "tests/common/coll_check.h"
#include "tests/common/fork_ranks.h"
#include "tests/common/mp_helpers.h"

namespace myriad::test {
namespace {

using namespace std::chrono_literals;
using CollParam = std::tuple<Coll, MpParam>;

class CollectiveMp : public testing::TestWithParam<CollParam> {};

TEST_P(CollectiveMp, MatchesReference) {
  const auto [coll, p] = GetParam();
  const uint64_t seed = testSeed();
  const std::vector<CollCase> cases = collCases(coll, p.nranks);
  auto body = [&](int rank, const myrUniqueId& id) -> int {
    useTransport(p.transport);
    return runInChild(p.nranks, rank, id, p.hostStream, [&](myrComm_t comm, myrStream_t stream) {
      return runCollCases(comm, rank, p.nranks, cases, stream, seed);
    });
  };
  const ForkOutcome out = forkRanks(p.nranks, body, 120s, seed);
  ASSERT_TRUE(out.allSucceeded()) << out.describeFailures();
}

INSTANTIATE_TEST_SUITE_P(Mp, CollectiveMp,
                         testing::Combine(testing::Values(Coll::kBroadcast, Coll::kReduce, Coll::kAllGather,
                                                          Coll::kReduceScatter, Coll::kAllToAll, Coll::kAllToAllv,
                                                          Coll::kGather, Coll::kScatter, Coll::kBarrier),
                                          testing::ValuesIn(mpParams())),
                         [](const testing::TestParamInfo<CollParam>& info) {
                           return std::string(collName(std::get<0>(info.param))) + "_" +
                                  mpParamName(std::get<1>(info.param));
                         });

}  // namespace
}  // namespace myriad::test
