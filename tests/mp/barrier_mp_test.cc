// myrBarrier really waits: in each round one rank (drawn from the seed) arrives 50 ms late, and no rank may
// leave the barrier before every rank has stamped its arrival into a page shared by all children. Blocking
// and on a host stream (the barrier completes when the stream is synchronised), shm and tcp, 2..5 ranks.
#include <gtest/gtest.h>
#include <sys/mman.h>

#include <atomic>
#include <chrono>
#include <new>
#include <string>
#include <thread>

#include "myriad/myriad.h"
#include "tests/common/fork_ranks.h"
#include "tests/common/mp_helpers.h"

namespace myriad::test {
namespace {

using namespace std::chrono_literals;
constexpr int kRounds = 6;
constexpr int kMaxRanks = 8;

struct Arrivals {  // lives in a MAP_SHARED page created before fork
  std::atomic<int> arrived[kRounds][kMaxRanks];
};

class BarrierMp : public testing::TestWithParam<MpParam> {};

TEST_P(BarrierMp, NoRankLeavesBeforeAllArrived) {
  const MpParam p = GetParam();
  const uint64_t seed = testSeed();
  void* page = mmap(nullptr, sizeof(Arrivals), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  ASSERT_NE(page, MAP_FAILED);
  auto* board = new (page) Arrivals();
  auto body = [&](int rank, const myrUniqueId& id) -> int {
    useTransport(p.transport);
    myrComm_t comm = nullptr;
    std::string err = initComm(&comm, p.nranks, id, rank);
    MYR_CHILD_CHECK(err.empty(), err);
    myrStream_t stream = nullptr;
    err = makeStream(p.hostStream, &stream);
    MYR_CHILD_CHECK(err.empty(), err);
    for (int round = 0; round < kRounds; ++round) {
      const int late = static_cast<int>((seed + static_cast<uint64_t>(round)) % static_cast<uint64_t>(p.nranks));
      if (rank == late) std::this_thread::sleep_for(50ms);
      board->arrived[round][rank].store(1);
      const myrResult_t res = myrBarrier(comm, stream);
      MYR_CHILD_CHECK(res == myrSuccess, resultText("myrBarrier", res, comm));
      err = syncStream(stream, comm);
      MYR_CHILD_CHECK(err.empty(), err);
      for (int r = 0; r < p.nranks; ++r) {
        MYR_CHILD_CHECK(board->arrived[round][r].load() == 1,
                        "round " + std::to_string(round) + ": left the barrier before rank " + std::to_string(r) +
                            " arrived (late rank " + std::to_string(late) + ")");
      }
    }
    err = finishComm(comm, stream);
    MYR_CHILD_CHECK(err.empty(), err);
    return 0;
  };
  const ForkOutcome out = forkRanks(p.nranks, body, 60s, seed);
  munmap(page, sizeof(Arrivals));
  ASSERT_TRUE(out.allSucceeded()) << out.describeFailures();
}

INSTANTIATE_TEST_SUITE_P(Mp, BarrierMp, testing::ValuesIn(mpParams()),
                         [](const testing::TestParamInfo<MpParam>& info) { return mpParamName(info.param); });

}  // namespace
}  // namespace myriad::test
