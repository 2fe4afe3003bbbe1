// All-reduce correctness across real processes: shm and tcp, 2..5 ranks, blocking (NULL stream) and host
// streams; every type with sum and max, every op on a few types; counts 0, 1, n-1, 1009 and 1<<20, in and
// out of place, against the host reference of tests/common/reference. One communicator per test runs all.
#include <gtest/gtest.h>

#include <chrono>
#include <string>
#include <vector>

#include "myriad/myriad.h"
#include "tests/common/dtype_values.h"
#include "tests/common/fork_ranks.h"
#include "tests/common/mp_helpers.h"
#include "tests/common/reference.h"

namespace myriad::test {
namespace {

using namespace std::chrono_literals;

std::vector<AllReduceCase> casesFor(int nranks) {
  std::vector<AllReduceCase> cases;
  const size_t counts[] = {0, 1, static_cast<size_t>(nranks - 1), 1009};
  for (int t = 0; t < kNumDataTypes; ++t) {
    for (myrRedOp_t op : {myrSum, myrMax}) {
      for (size_t count : counts) {
        for (bool inPlace : {false, true}) cases.push_back({static_cast<myrDataType_t>(t), op, count, inPlace});
      }
    }
  }
  for (myrDataType_t type : {myrFloat32, myrInt32, myrUint8, myrFloat16, myrBfloat16, myrInt64, myrFloat8e4m3}) {
    for (myrRedOp_t op : {myrProd, myrMin, myrAvg}) {
      for (bool inPlace : {false, true}) cases.push_back({type, op, 1009, inPlace});
    }
  }
  for (bool inPlace : {false, true}) cases.push_back({myrFloat32, myrSum, size_t{1} << 20, inPlace});
  cases.push_back({myrFloat32, myrAvg, size_t{1} << 20, false});
  return cases;
}

class AllReduceMp : public testing::TestWithParam<MpParam> {};

TEST_P(AllReduceMp, MatchesReference) {
  const MpParam p = GetParam();
  const uint64_t seed = testSeed();
  const std::vector<AllReduceCase> cases = casesFor(p.nranks);
  auto body = [&](int rank, const myrUniqueId& id) -> int {
    useTransport(p.transport);
    myrComm_t comm = nullptr;
    std::string err = initComm(&comm, p.nranks, id, rank);
    MYR_CHILD_CHECK(err.empty(), err);
    int count = -1;
    int me = -1;
    MYR_CHILD_CHECK(myrCommCount(comm, &count) == myrSuccess && count == p.nranks,
                    "myrCommCount gave " + std::to_string(count));
    MYR_CHILD_CHECK(myrCommUserRank(comm, &me) == myrSuccess && me == rank,
                    "myrCommUserRank gave " + std::to_string(me));
    myrStream_t stream = nullptr;
    err = makeStream(p.hostStream, &stream);
    MYR_CHILD_CHECK(err.empty(), err);
    for (size_t i = 0; i < cases.size(); ++i) {
      err = runAllReduceCase(comm, rank, p.nranks, cases[i], stream, seed + i);
      MYR_CHILD_CHECK(err.empty(), err);
    }
    err = finishComm(comm, stream);
    MYR_CHILD_CHECK(err.empty(), err);
    return 0;
  };
  const ForkOutcome out = forkRanks(p.nranks, body, 180s, seed);
  ASSERT_TRUE(out.allSucceeded()) << out.describeFailures();
}

// Calls issued back to back on one stream run in issue order: an in-place chain x -> sum(x) -> sum(sum(x))
// gives n * reference only if the second call sees the first one's result.
TEST_P(AllReduceMp, InPlaceChainKeepsOrder) {
  const MpParam p = GetParam();
  const uint64_t seed = testSeed();
  constexpr size_t kCount = (size_t{1} << 16) + 3;
  auto body = [&](int rank, const myrUniqueId& id) -> int {
    useTransport(p.transport);
    myrComm_t comm = nullptr;
    std::string err = initComm(&comm, p.nranks, id, rank);
    MYR_CHILD_CHECK(err.empty(), err);
    myrStream_t stream = nullptr;
    err = makeStream(p.hostStream, &stream);
    MYR_CHILD_CHECK(err.empty(), err);
    std::vector<int32_t> buf(kCount);  // integers: both sums are exact, so any reordering of the calls shows
    fillInput(buf.data(), kCount, myrInt32, myrSum, rank, p.nranks, seed);
    for (int step = 0; step < 2; ++step) {
      const myrResult_t res = myrAllReduce(buf.data(), buf.data(), kCount, myrInt32, myrSum, comm, stream);
      MYR_CHILD_CHECK(res == myrSuccess, resultText("myrAllReduce", res, comm));
    }
    if (stream != nullptr) {
      const myrResult_t res = myrStreamSynchronize(stream);
      MYR_CHILD_CHECK(res == myrSuccess, resultText("myrStreamSynchronize", res, comm));
    }
    for (size_t i = 0; i < kCount; ++i) {
      const double want = p.nranks * expectedValue(myrInt32, myrSum, p.nranks, i, seed);
      MYR_CHILD_CHECK(buf[i] == want, "element " + std::to_string(i) + " is " + std::to_string(buf[i]) + ", want " +
                                          std::to_string(want));
    }
    err = finishComm(comm, stream);
    MYR_CHILD_CHECK(err.empty(), err);
    return 0;
  };
  const ForkOutcome out = forkRanks(p.nranks, body, 60s, seed);
  ASSERT_TRUE(out.allSucceeded()) << out.describeFailures();
}

INSTANTIATE_TEST_SUITE_P(Mp, AllReduceMp, testing::ValuesIn(mpParams()),
                         [](const testing::TestParamInfo<MpParam>& info) { return mpParamName(info.param); });

}  // namespace
}  // namespace myriad::test
