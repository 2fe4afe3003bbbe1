// myrCommSplit across processes: odd/even ranks with keys that reverse the order, one child per "host"
// (MYRIAD_HOST_ID), MYR_SPLIT_NOCOLOR for some ranks (newcomm NULL), and two successive splits plus a split
// of a child, a non-blocking split, and a group over parent and child. Each child's size, ranks and member
// order are checked (an all-gather of the parent ranks), collectives run on the children, and the parent
// still works after every split.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include "myriad/myriad.h"
#include "tests/common/coll_check.h"
#include "tests/common/fork_ranks.h"
#include "tests/common/mp_helpers.h"

namespace myriad::test {
namespace {

using namespace std::chrono_literals;

struct SplitParam {
  Transport transport;
  int nranks;
  int nhosts;  // > 1: MYRIAD_HOST_ID splits the ranks into hosts (shm inside, tcp between)
  bool hostStream;
};

void PrintTo(const SplitParam& p, std::ostream* os) {
  *os << transportName(p.transport) << " n=" << p.nranks << " hosts=" << p.nhosts
      << (p.hostStream ? " host stream" : " blocking");
}

// Waits (10 s at most) for a non-blocking init to finish; "" once the communicator is ready.
std::string waitReady(myrComm_t comm) {
  const auto end = std::chrono::steady_clock::now() + 10s;
  myrResult_t state = myrInProgress;
  while (std::chrono::steady_clock::now() < end) {
    const myrResult_t res = myrCommGetAsyncError(comm, &state);
    if (res != myrSuccess) return resultText("myrCommGetAsyncError", res, comm);
    if (state != myrInProgress) break;
    std::this_thread::sleep_for(1ms);
  }
  return state == myrSuccess ? "" : std::string("the non-blocking split ended with ") + myrGetErrorString(state);
}

// Splits and checks the child: NULL for NOCOLOR, else `members` (parent ranks in child rank order).
// blocking false: a non-blocking split (config.blocking = 0), waited for with myrCommGetAsyncError.
std::string split(myrComm_t parent, int parentRank, int color, int key, const std::vector<int>& members,
                  myrComm_t* child, bool blocking = true) {
  *child = nullptr;
  const std::string what = std::string(blocking ? "" : "non-blocking ") + "split(color " + std::to_string(color) +
                           ", key " + std::to_string(key) + ")";
  myrConfig_t config = MYR_CONFIG_INITIALIZER;
  config.blocking = 0;
  myrResult_t res = myrCommSplit(parent, color, key, child, blocking ? nullptr : &config);
  if (res != myrSuccess && (blocking || res != myrInProgress))
    return what + ": " + resultText("myrCommSplit", res, parent);
  // Non-blocking, a rank that joins a child gets myrInProgress: myrSuccess would mean the split ran blocking.
  if (!blocking && color != MYR_SPLIT_NOCOLOR && res != myrInProgress)
    return what + ": myrCommSplit returned " + myrGetErrorString(res) + ", want myrInProgress";
  if (color == MYR_SPLIT_NOCOLOR) return *child == nullptr ? "" : what + ": newcomm is not NULL for NOCOLOR";
  if (*child == nullptr) return what + ": newcomm is NULL";
  if (!blocking) {
    const std::string err = waitReady(*child);
    if (!err.empty()) return what + ": " + err;
  }
  int count = -1, me = -1;
  res = myrCommCount(*child, &count);
  if (res != myrSuccess || count != static_cast<int>(members.size()))
    return what + ": myrCommCount gave " + std::to_string(count) + ", want " + std::to_string(members.size());
  int want = 0;
  while (members[static_cast<size_t>(want)] != parentRank) ++want;
  res = myrCommUserRank(*child, &me);
  if (res != myrSuccess || me != want)
    return what + ": myrCommUserRank gave " + std::to_string(me) + ", want " + std::to_string(want);
  const int32_t mine = parentRank;
  std::vector<int32_t> all(members.size(), -1);
  res = myrAllGather(&mine, all.data(), 1, myrInt32, *child, nullptr);
  if (res != myrSuccess) return what + ": " + resultText("myrAllGather on the child", res, *child);
  for (size_t i = 0; i < members.size(); ++i) {
    if (all[i] != members[i])
      return what + ": child rank " + std::to_string(i) + " is parent rank " + std::to_string(all[i]) + ", want " +
             std::to_string(members[i]);
  }
  return "";
}

// A few collectives on comm (a child or the parent), checked.
std::string exercise(myrComm_t comm, myrStream_t stream, uint64_t salt) {
  int n = 0, me = 0;
  myrCommCount(comm, &n);
  myrCommUserRank(comm, &me);
  for (Coll c : {Coll::kAllReduce, Coll::kBroadcast, Coll::kAllToAllv}) {
    std::string err = runCollCases(comm, me, n, collCases(c, n, true), stream, salt);
    if (!err.empty()) return err;
  }
  return "";
}

std::vector<int> ranksWhere(int n, bool (*pick)(int rank, int n)) {
  std::vector<int> out;
  for (int r = 0; r < n; ++r) {
    if (pick(r, n)) out.push_back(r);
  }
  return out;
}

class SplitMp : public testing::TestWithParam<SplitParam> {
 protected:
  void runRanks(const std::function<std::string(myrComm_t, int, myrStream_t, uint64_t)>& fn) {
    const SplitParam p = GetParam();
    const uint64_t seed = testSeed();
    auto body = [&](int rank, const myrUniqueId& id) -> int {
      useTransport(p.transport);
      useHosts(rank, p.nranks, p.nhosts);
      return runInChild(p.nranks, rank, id, p.hostStream, [&](myrComm_t comm, myrStream_t stream) {
        std::string err = fn(comm, rank, stream, seed);
        if (!err.empty()) return err;
        err = exercise(comm, stream, seed + 1000);
        return err.empty() ? err : "the parent after the splits: " + err;
      });
    };
    const ForkOutcome out = forkRanks(p.nranks, body, 60s, seed);
    ASSERT_TRUE(out.allSucceeded()) << out.describeFailures();
  }
  int n() const { return GetParam().nranks; }
};

std::string destroy(myrComm_t comm, const char* what) {
  if (comm == nullptr) return "";
  const myrResult_t res = myrCommDestroy(comm);
  return res == myrSuccess ? "" : std::string(what) + ": " + resultText("myrCommDestroy", res, nullptr);
}

TEST_P(SplitMp, OddEvenWithReversedKeys) {
  runRanks([&](myrComm_t parent, int rank, myrStream_t stream, uint64_t seed) -> std::string {
    std::vector<int> members = ranksWhere(n(), [](int r, int) { return r % 2 == 0; });
    if (rank % 2 == 1) members = ranksWhere(n(), [](int r, int) { return r % 2 == 1; });
    std::reverse(members.begin(), members.end());
    myrComm_t child = nullptr;
    std::string err = split(parent, rank, rank % 2, -rank, members, &child);
    if (err.empty()) err = exercise(child, stream, seed);
    if (err.empty()) err = destroy(child, "the odd/even child");
    return err;
  });
}

TEST_P(SplitMp, OneChildPerHost) {
  runRanks([&](myrComm_t parent, int rank, myrStream_t stream, uint64_t seed) -> std::string {
    const SplitParam& p = GetParam();
    const int host = hostOfRank(rank, p.nranks, p.nhosts);
    std::vector<int> members;
    for (int r = 0; r < p.nranks; ++r) {
      if (hostOfRank(r, p.nranks, p.nhosts) == host) members.push_back(r);
    }
    myrComm_t child = nullptr;
    std::string err = split(parent, rank, host, rank, members, &child);
    if (err.empty()) err = exercise(child, stream, seed);
    if (err.empty()) err = exercise(parent, stream, seed + 1);  // parent and child side by side
    if (err.empty()) err = destroy(child, "the host child");
    return err;
  });
}

TEST_P(SplitMp, NoColorLeavesRanksOut) {
  runRanks([&](myrComm_t parent, int rank, myrStream_t stream, uint64_t seed) -> std::string {
    auto out = [](int r, int n) { return r == 0 || r == n - 1; };
    std::vector<int> members = ranksWhere(n(), [](int r, int n) { return r != 0 && r != n - 1; });
    myrComm_t child = nullptr;
    // Equal keys: members keep their parent order.
    std::string err = split(parent, rank, out(rank, n()) ? MYR_SPLIT_NOCOLOR : 7, 3, members, &child);
    if (err.empty() && child != nullptr) err = exercise(child, stream, seed);
    if (err.empty()) err = destroy(child, "the child");
    return err;
  });
}

TEST_P(SplitMp, SuccessiveSplitsAndASplitOfAChild) {
  runRanks([&](myrComm_t parent, int rank, myrStream_t stream, uint64_t seed) -> std::string {
    const int half = n() / 2;
    myrComm_t parity = nullptr, halves = nullptr, grand = nullptr;
    std::vector<int> members = ranksWhere(n(), [](int r, int) { return r % 2 == 0; });
    if (rank % 2 == 1) members = ranksWhere(n(), [](int r, int) { return r % 2 == 1; });
    std::string err = split(parent, rank, rank % 2, rank, members, &parity);
    std::vector<int> low, high;
    for (int r = 0; r < n(); ++r) (r < half ? low : high).push_back(r);
    if (err.empty()) err = split(parent, rank, rank < half ? 0 : 1, rank, rank < half ? low : high, &halves);
    // The parity child split again: its rank 0 alone (NOCOLOR for the others would leave it empty).
    int parityRank = -1;
    if (err.empty()) myrCommUserRank(parity, &parityRank);
    if (err.empty()) {
      const std::vector<int> alone = {parityRank};
      const std::vector<int> rest = [&] {
        std::vector<int> v;
        for (int i = 1; i < static_cast<int>(members.size()); ++i) v.push_back(i);
        return v;
      }();
      err = split(parity, parityRank, parityRank == 0 ? 0 : 1, parityRank, parityRank == 0 ? alone : rest, &grand);
    }
    if (err.empty()) err = exercise(halves, stream, seed);
    if (err.empty()) err = exercise(parity, stream, seed + 1);
    if (err.empty()) err = exercise(grand, stream, seed + 2);
    if (err.empty()) err = destroy(parity, "the parity child");  // the grandchild outlives its parent
    if (err.empty()) err = exercise(grand, stream, seed + 3);
    if (err.empty()) err = destroy(grand, "the grandchild");
    if (err.empty()) err = destroy(halves, "the halves child");
    return err;
  });
}

TEST_P(SplitMp, NonBlockingSplitWithNoColor) {
  runRanks([&](myrComm_t parent, int rank, myrStream_t stream, uint64_t seed) -> std::string {
    const std::vector<int> members = ranksWhere(n(), [](int r, int) { return r != 1; });
    myrComm_t child = nullptr;
    std::string err = split(parent, rank, rank == 1 ? MYR_SPLIT_NOCOLOR : 0, 0, members, &child, false);
    if (err.empty() && child != nullptr) err = exercise(child, stream, seed);
    if (err.empty()) err = destroy(child, "the non-blocking child");
    return err;
  });
}

// One group over two communicators (myrGroupEnd issues each on a thread of its own): a ring of sends on the
// parent and an all-reduce on the parity child complete together, 32 times (on a host stream both land on
// the one stream, in an order that must not differ between ranks).
std::string groupOverTwo(myrComm_t parent, myrComm_t child, int rank, int n, const std::vector<int>& members,
                         myrStream_t stream) {
  const size_t count = 70000;
  std::vector<float> out(count, static_cast<float>(rank)), in(count, -1.0f);
  std::vector<float> sum(count, static_cast<float>(rank));
  myrGroupStart();
  myrResult_t r1 = myrAllReduce(sum.data(), sum.data(), count, myrFloat32, myrSum, child, stream);
  myrResult_t r2 = myrSend(out.data(), count, myrFloat32, (rank + 1) % n, parent, stream);
  myrResult_t r3 = myrRecv(in.data(), count, myrFloat32, (rank + n - 1) % n, parent, stream);
  const myrResult_t ended = myrGroupEnd();
  if (r1 != myrSuccess || r2 != myrSuccess || r3 != myrSuccess || ended != myrSuccess)
    return std::string("group over two communicators: ") + myrGetErrorString(ended) + ": " + myrGetLastError(nullptr) +
           " / " + myrGetLastError(parent) + " / " + myrGetLastError(child);
  std::string err = syncStream(stream, parent);
  if (!err.empty()) return "group over two communicators: " + err;
  float want = 0;
  for (int m : members) want += static_cast<float>(m);
  for (size_t i = 0; i < count; ++i) {
    if (in[i] != static_cast<float>((rank + n - 1) % n)) return "the parent's receive got " + std::to_string(in[i]);
    if (sum[i] != want)
      return "the child's all-reduce gave " + std::to_string(sum[i]) + ", want " + std::to_string(want);
  }
  return "";
}

TEST_P(SplitMp, GroupOverParentAndChild) {
  runRanks([&](myrComm_t parent, int rank, myrStream_t stream, uint64_t seed) -> std::string {
    std::vector<int> members = ranksWhere(n(), [](int r, int) { return r % 2 == 0; });
    if (rank % 2 == 1) members = ranksWhere(n(), [](int r, int) { return r % 2 == 1; });
    myrComm_t child = nullptr;
    std::string err = split(parent, rank, rank % 2, rank, members, &child);
    for (int round = 0; round < 32 && err.empty(); ++round) {
      err = groupOverTwo(parent, child, rank, n(), members, stream);
      if (!err.empty()) err = "round " + std::to_string(round) + ": " + err;
    }
    if (err.empty()) err = exercise(child, stream, seed);
    if (err.empty()) err = destroy(child, "the parity child");
    return err;
  });
}

INSTANTIATE_TEST_SUITE_P(Mp, SplitMp,
                         testing::Values(SplitParam{Transport::kShm, 5, 1, false},
                                         SplitParam{Transport::kTcp, 4, 1, true},
                                         SplitParam{Transport::kShm, 5, 2, true},
                                         SplitParam{Transport::kShm, 4, 2, false}),
                         [](const testing::TestParamInfo<SplitParam>& info) {
                           const SplitParam& p = info.param;
                           return std::string(transportName(p.transport)) + "_n" + std::to_string(p.nranks) + "_h" +
                                  std::to_string(p.nhosts) + (p.hostStream ? "_hoststream" : "_blocking");
                         });

}  // namespace
}  // namespace myriad::test
