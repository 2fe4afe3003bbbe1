// myrCommShrink across processes. A seed-chosen victim (1..n-1; the gtest process hosts the rendezvous)
// SIGKILLs itself between two all-reduces and never calls shrink; the survivors run until their all-reduce
// fails, shrink with MYR_SHRINK_ABORT excluding it, and check the new communicator: its size, their new
// ranks (parent order), and an all-reduce and an all-gather whose inputs depend on the parent rank, against
// references computed here. Also a live rank left out that never calls shrink (MYR_SHRINK_DEFAULT with an
// all-reduce still queued on a host stream, which shrink must wait for), and a stopped rank whose silence
// would hang the survivors' queued all-reduce for a minute (MYR_SHRINK_ABORT releases it).
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/mman.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <new>
#include <string>
#include <thread>
#include <vector>

#include "myriad/myriad.h"
#include "tests/common/fork_ranks.h"
#include "tests/common/mp_helpers.h"

namespace myriad::test {
namespace {

using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

constexpr int kMaxIterations = 1000;
constexpr double kShrinkDeadlineSeconds = 10.0;

// Every input element of parent rank p: distinct per rank and exact in float sums.
int32_t valueOf(int parentRank, size_t i, uint64_t salt) {
  return (parentRank + 1) * 100 + static_cast<int32_t>((i + salt) % 61);
}

std::vector<int> survivorsWithout(int nranks, int excluded) {
  std::vector<int> out;
  for (int r = 0; r < nranks; ++r) {
    if (r != excluded) out.push_back(r);
  }
  return out;
}

std::string checkAllReduce(myrComm_t child, int parentRank, const std::vector<int>& survivors, uint64_t salt) {
  const size_t count = 70001 + salt % 1000;  // several chunks, uneven over the ranks
  std::vector<float> send(count), recv(count, -1.0f);
  for (size_t i = 0; i < count; ++i) send[i] = static_cast<float>(valueOf(parentRank, i, salt));
  const myrResult_t res = myrAllReduce(send.data(), recv.data(), count, myrFloat32, myrSum, child, nullptr);
  if (res != myrSuccess) return resultText("myrAllReduce on the new communicator", res, child);
  for (size_t i = 0; i < count; ++i) {
    float want = 0;
    for (int s : survivors) want += static_cast<float>(valueOf(s, i, salt));
    if (recv[i] != want)
      return "all-reduce element " + std::to_string(i) + " is " + std::to_string(recv[i]) + ", want " +
             std::to_string(want);
  }
  return "";
}

std::string checkAllGather(myrComm_t child, int parentRank, const std::vector<int>& survivors, uint64_t salt) {
  const size_t count = 1009;
  std::vector<int32_t> send(count), recv(count * survivors.size(), -1);
  for (size_t i = 0; i < count; ++i) send[i] = valueOf(parentRank, i, salt);
  const myrResult_t res = myrAllGather(send.data(), recv.data(), count, myrInt32, child, nullptr);
  if (res != myrSuccess) return resultText("myrAllGather on the new communicator", res, child);
  for (size_t b = 0; b < survivors.size(); ++b) {
    for (size_t i = 0; i < count; ++i) {
      const int32_t want = valueOf(survivors[b], i, salt);
      if (recv[b * count + i] != want)
        return "all-gather block " + std::to_string(b) + " element " + std::to_string(i) + " is " +
               std::to_string(recv[b * count + i]) + ", want " + std::to_string(want) + " (from parent rank " +
               std::to_string(survivors[b]) + ")";
    }
  }
  return "";
}

// The new communicator of `survivors` (parent ranks in new-rank order), seen from parent rank `parentRank`.
std::string checkShrunk(myrComm_t child, int parentRank, const std::vector<int>& survivors, uint64_t salt) {
  if (child == nullptr) return "newcomm is NULL";
  int count = -1, me = -1;
  myrResult_t res = myrCommCount(child, &count);
  if (res != myrSuccess || count != static_cast<int>(survivors.size()))
    return "myrCommCount gave " + std::to_string(count) + ", want " + std::to_string(survivors.size());
  int want = 0;
  while (survivors[static_cast<size_t>(want)] != parentRank) ++want;
  res = myrCommUserRank(child, &me);
  if (res != myrSuccess || me != want)
    return "myrCommUserRank gave " + std::to_string(me) + ", want " + std::to_string(want);
  for (uint64_t round = 0; round < 3; ++round) {
    std::string err = checkAllReduce(child, parentRank, survivors, salt + round);
    if (err.empty()) err = checkAllGather(child, parentRank, survivors, salt + round);
    if (!err.empty()) return "round " + std::to_string(round) + ": " + err;
  }
  return "";
}

struct ShrinkParam {
  Transport transport;
  int nranks;
  bool hostStream;  // the all-reduces before the kill run on a host stream, synchronised every 4 calls
};

void PrintTo(const ShrinkParam& p, std::ostream* os) {
  *os << transportName(p.transport) << " n=" << p.nranks << (p.hostStream ? " host stream" : " blocking");
}

// All-reduces until one fails; the victim kills itself before call `killAt`. Returns the failing result.
myrResult_t allReduceUntilFailure(myrComm_t comm, myrStream_t stream, bool victim, int killAt) {
  std::vector<float> buf(4096, 1.0f);
  for (int it = 0; it < kMaxIterations; ++it) {
    if (victim && it == killAt) raise(SIGKILL);
    myrResult_t res = myrAllReduce(buf.data(), buf.data(), buf.size(), myrFloat32, myrMax, comm, stream);
    if (res == myrSuccess && stream != nullptr && it % 4 == 3) res = myrStreamSynchronize(stream);
    if (res != myrSuccess) return res;
  }
  return myrSuccess;
}

class ShrinkMp : public testing::TestWithParam<ShrinkParam> {};

TEST_P(ShrinkMp, AfterAKillTheSurvivorsGoOn) {
  const ShrinkParam p = GetParam();
  const uint64_t seed = testSeed();
  const int victim = 1 + static_cast<int>(seed % static_cast<uint64_t>(p.nranks - 1));
  const int killAt = 3 + static_cast<int>((seed / 7) % 20);
  SCOPED_TRACE("seed " + std::to_string(seed) + ": rank " + std::to_string(victim) + " of " + std::to_string(p.nranks) +
               " kills itself before all-reduce " + std::to_string(killAt));
  const std::vector<int> survivors = survivorsWithout(p.nranks, victim);
  auto body = [&](int rank, const myrUniqueId& id) -> int {
    useTransport(p.transport);
    setenv("MYRIAD_TIMEOUT_MS", "2000", 1);
    myrComm_t comm = nullptr;
    std::string err = initComm(&comm, p.nranks, id, rank);
    MYR_CHILD_CHECK(err.empty(), err);
    myrStream_t stream = nullptr;
    err = makeStream(p.hostStream, &stream);
    MYR_CHILD_CHECK(err.empty(), err);
    const myrResult_t failed = allReduceUntilFailure(comm, stream, rank == victim, killAt);
    MYR_CHILD_CHECK(failed != myrSuccess, "the all-reduces never failed");

    int excluded[1] = {victim};
    myrComm_t child = nullptr;
    const auto t0 = Clock::now();
    const myrResult_t res = myrCommShrink(comm, excluded, 1, &child, nullptr, MYR_SHRINK_ABORT);
    const double seconds = std::chrono::duration<double>(Clock::now() - t0).count();
    MYR_CHILD_CHECK(res == myrSuccess, resultText("myrCommShrink", res, comm));
    MYR_CHILD_CHECK(seconds < kShrinkDeadlineSeconds, "myrCommShrink took " + std::to_string(seconds) + " s");
    err = checkShrunk(child, rank, survivors, seed);
    MYR_CHILD_CHECK(err.empty(), "the new communicator: " + err);
    MYR_CHILD_CHECK(myrCommDestroy(child) == myrSuccess, "myrCommDestroy(newcomm) failed");
    if (stream != nullptr) (void)myrStreamDestroy(stream);  // its calls failed with the parent
    MYR_CHILD_CHECK(myrCommDestroy(comm) == myrSuccess, "myrCommDestroy(parent) failed");
    return 0;
  };
  const ForkOutcome out = forkRanks(p.nranks, body, 90s, seed);
  ASSERT_TRUE(out.setupError.empty()) << out.describeFailures();
  ASSERT_EQ(out.ranks.size(), static_cast<size_t>(p.nranks));
  const RankOutcome& dead = out.ranks[static_cast<size_t>(victim)];
  EXPECT_TRUE(!dead.killedAtDeadline && dead.termSignal == SIGKILL) << "the victim: " << dead.describe();
  for (const RankOutcome& r : out.ranks) {
    if (r.rank == victim) continue;
    EXPECT_TRUE(r.succeeded()) << "survivor " << r.describe();
  }
}

// No rank dies: rank `left` (any, by the seed) is left out, finishes its queued all-reduce and leaves without
// calling shrink; the others shrink with MYR_SHRINK_DEFAULT while that all-reduce may still be queued.
TEST_P(ShrinkMp, ALiveRankLeftOutNeverCalls) {
  const ShrinkParam p = GetParam();
  const uint64_t seed = testSeed();
  const int left = static_cast<int>(seed % static_cast<uint64_t>(p.nranks));
  SCOPED_TRACE("seed " + std::to_string(seed) + ": rank " + std::to_string(left) + " of " + std::to_string(p.nranks) +
               " is left out");
  const std::vector<int> survivors = survivorsWithout(p.nranks, left);
  auto body = [&](int rank, const myrUniqueId& id) -> int {
    useTransport(p.transport);
    return runInChild(p.nranks, rank, id, true, [&](myrComm_t comm, myrStream_t stream) -> std::string {
      const size_t count = 300000;
      std::vector<float> sum(count, static_cast<float>(rank));
      // Late, so that the others' all-reduce is surely still queued when they call shrink.
      if (rank == left) std::this_thread::sleep_for(300ms);
      myrResult_t res = myrAllReduce(sum.data(), sum.data(), count, myrFloat32, myrSum, comm, stream);
      if (res != myrSuccess) return resultText("the queued myrAllReduce", res, comm);
      if (rank == left) return syncStream(stream, comm);
      int excluded[1] = {left};
      myrComm_t child = nullptr;
      res = myrCommShrink(comm, excluded, 1, &child, nullptr, MYR_SHRINK_DEFAULT);
      if (res != myrSuccess) return resultText("myrCommShrink", res, comm);
      // MYR_SHRINK_DEFAULT waited for the queued all-reduce: its result is there before any synchronisation.
      const float want = static_cast<float>(p.nranks * (p.nranks - 1) / 2);
      if (sum[0] != want || sum[count - 1] != want)
        return "the all-reduce queued before the shrink had not finished when it returned: " + std::to_string(sum[0]);
      std::string err = checkShrunk(child, rank, survivors, seed);
      if (!err.empty()) return "the new communicator: " + err;
      if (myrCommDestroy(child) != myrSuccess) return "myrCommDestroy(newcomm) failed";
      return syncStream(stream, comm);
    });
  };
  const ForkOutcome out = forkRanks(p.nranks, body, 60s, seed);
  ASSERT_TRUE(out.allSucceeded()) << out.describeFailures();
}

// The victim stops (SIGSTOP: alive, silent) and the silence timeouts are 20 s, so the survivors' all-reduce
// queued on a host stream hangs; MYR_SHRINK_ABORT must release it at once and shrink without the victim. The
// first survivor to finish SIGKILLs the victim.
TEST_P(ShrinkMp, AbortReleasesAHungCall) {
  const ShrinkParam p = GetParam();
  const uint64_t seed = testSeed();
  const int victim = static_cast<int>(seed % static_cast<uint64_t>(p.nranks));
  SCOPED_TRACE("seed " + std::to_string(seed) + ": rank " + std::to_string(victim) + " of " + std::to_string(p.nranks) +
               " stops");
  void* page = mmap(nullptr, sizeof(std::atomic<int>), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  ASSERT_NE(page, MAP_FAILED);
  auto* victimPid = new (page) std::atomic<int>(0);
  const std::vector<int> survivors = survivorsWithout(p.nranks, victim);
  auto body = [&](int rank, const myrUniqueId& id) -> int {
    useTransport(p.transport);
    setenv("MYRIAD_TIMEOUT_MS", "20000", 1);
    setenv("MYRIAD_PEER_DEAD_MS", "20000", 1);  // where a liveness channel would call the stopped rank dead sooner
    return runInChild(p.nranks, rank, id, true, [&](myrComm_t comm, myrStream_t stream) -> std::string {
      std::vector<float> buf(4096, 1.0f);
      myrResult_t res = myrAllReduce(buf.data(), buf.data(), buf.size(), myrFloat32, myrSum, comm, stream);
      std::string err = res == myrSuccess ? syncStream(stream, comm) : resultText("the first myrAllReduce", res, comm);
      if (!err.empty()) return err;
      if (rank == victim) {
        victimPid->store(getpid());
        raise(SIGSTOP);
        return "the victim went on after SIGSTOP";
      }
      res = myrAllReduce(buf.data(), buf.data(), buf.size(), myrFloat32, myrSum, comm, stream);
      if (res != myrSuccess) return resultText("the queued myrAllReduce", res, comm);
      std::this_thread::sleep_for(200ms);  // it waits on the stopped victim now
      int excluded[1] = {victim};
      myrComm_t child = nullptr;
      const auto t0 = Clock::now();
      res = myrCommShrink(comm, excluded, 1, &child, nullptr, MYR_SHRINK_ABORT);
      const double seconds = std::chrono::duration<double>(Clock::now() - t0).count();
      if (res != myrSuccess) return resultText("myrCommShrink", res, comm);
      if (seconds > kShrinkDeadlineSeconds) return "myrCommShrink took " + std::to_string(seconds) + " s";
      err = checkShrunk(child, rank, survivors, seed);
      if (!err.empty()) return "the new communicator: " + err;
      if (myrCommDestroy(child) != myrSuccess) return "myrCommDestroy(newcomm) failed";
      if (myrStreamSynchronize(stream) == myrSuccess) return "the hung all-reduce succeeded after the abort";
      const int pid = victimPid->exchange(0);
      if (pid > 0) kill(pid, SIGKILL);
      return "";
    });
  };
  const ForkOutcome out = forkRanks(p.nranks, body, 60s, seed);
  munmap(page, sizeof(std::atomic<int>));
  ASSERT_EQ(out.ranks.size(), static_cast<size_t>(p.nranks)) << out.describeFailures();
  const RankOutcome& stopped = out.ranks[static_cast<size_t>(victim)];
  EXPECT_TRUE(!stopped.killedAtDeadline && stopped.termSignal == SIGKILL) << "the victim: " << stopped.describe();
  for (const RankOutcome& r : out.ranks) {
    if (r.rank == victim) continue;
    EXPECT_TRUE(r.succeeded()) << "survivor " << r.describe();
  }
}

INSTANTIATE_TEST_SUITE_P(Mp, ShrinkMp,
                         testing::Values(ShrinkParam{Transport::kShm, 4, false}, ShrinkParam{Transport::kTcp, 4, false},
                                         ShrinkParam{Transport::kShm, 4, true}, ShrinkParam{Transport::kTcp, 3, true}),
                         [](const testing::TestParamInfo<ShrinkParam>& info) {
                           const ShrinkParam& p = info.param;
                           return std::string(transportName(p.transport)) + "_n" + std::to_string(p.nranks) +
                                  (p.hostStream ? "_hoststream" : "_blocking");
                         });

}  // namespace
}  // namespace myriad::test
