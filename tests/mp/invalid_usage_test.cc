// Misuse of groups, splits, shrinks and MYRIAD_ALGO (see src/dispatch/select.cc: the list is checked at every call, an
// entry of another collective is ignored): each is refused with its documented code and a message naming the
// problem, nothing is enqueued, and a good call on the same communicator right after still works.
#include <gtest/gtest.h>

#include <chrono>
#include <functional>
#include <string>
#include <vector>

#include "myriad/myriad.h"
#include "tests/common/coll_check.h"
#include "tests/common/fork_ranks.h"
#include "tests/common/mp_helpers.h"

namespace myriad::test {
namespace {

using namespace std::chrono_literals;
constexpr int kRanks = 3;

std::string checked(myrComm_t comm, int rank, Coll coll, uint64_t salt) {
  return runCollCase(comm, rank, kRanks, {coll, myrFloat32, myrSum, 1009, 0, false}, nullptr, salt);
}

// Runs fn in kRanks children with MYRIAD_ALGO = algo.
void runRanks(const std::string& algo, const std::function<std::string(myrComm_t, int, uint64_t)>& fn) {
  const uint64_t seed = testSeed();
  auto body = [&](int rank, const myrUniqueId& id) -> int {
    forceAlgorithms(algo);
    myrComm_t comm = nullptr;
    std::string err = initComm(&comm, kRanks, id, rank);
    MYR_CHILD_CHECK(err.empty(), "MYRIAD_ALGO=" + algo + ": " + err);
    err = fn(comm, rank, seed);
    MYR_CHILD_CHECK(err.empty(), "MYRIAD_ALGO=" + algo + ": " + err);
    err = finishComm(comm, nullptr);
    MYR_CHILD_CHECK(err.empty(), err);
    return 0;
  };
  const ForkOutcome out = forkRanks(kRanks, body, 60s, seed);
  ASSERT_TRUE(out.allSucceeded()) << out.describeFailures();
}

TEST(InvalidUsage, GroupEndWithoutStart) {
  runRanks("", [](myrComm_t comm, int rank, uint64_t salt) -> std::string {
    std::string err = expectError("myrGroupEnd alone", myrGroupEnd(), myrInvalidUsage, nullptr, "myrGroupStart");
    if (err.empty())
      err = expectError("a second myrGroupEnd", myrGroupEnd(), myrInvalidUsage, nullptr, "myrGroupStart");
    return err.empty() ? checked(comm, rank, Coll::kAllReduce, salt) : err;
  });
}

TEST(InvalidUsage, BadCallInsideAGroupQueuesNothing) {
  runRanks("", [](myrComm_t comm, int rank, uint64_t salt) -> std::string {
    std::vector<float> out(1000, static_cast<float>(rank)), in(1000, -1.0f);
    const int next = (rank + 1) % kRanks, prev = (rank + kRanks - 1) % kRanks;
    myrGroupStart();
    std::string err =
        expectError("send to peer 7 in a group", myrSend(out.data(), out.size(), myrFloat32, 7, comm, nullptr),
                    myrInvalidArgument, comm, "peer");
    myrResult_t sent = myrSend(out.data(), out.size(), myrFloat32, next, comm, nullptr);
    myrResult_t got = myrRecv(in.data(), in.size(), myrFloat32, prev, comm, nullptr);
    const myrResult_t ended = myrGroupEnd();
    if (!err.empty()) return err;
    if (sent != myrSuccess || got != myrSuccess || ended != myrSuccess)
      return std::string("the good calls of the group failed: ") + myrGetErrorString(ended) + ": " +
             myrGetLastError(nullptr) + " / " + myrGetLastError(comm);
    for (float v : in) {
      if (v != static_cast<float>(prev)) return "the group's receive got " + std::to_string(v);
    }
    return checked(comm, rank, Coll::kAllGather, salt);
  });
}

TEST(InvalidUsage, UnpairedSendToSelfInAGroup) {
  runRanks("", [](myrComm_t comm, int rank, uint64_t salt) -> std::string {
    std::vector<float> buf(100, 1.0f);
    myrGroupStart();
    myrResult_t res = myrSend(buf.data(), buf.size(), myrFloat32, rank, comm, nullptr);
    if (res != myrSuccess) return std::string("send to self in a group: ") + myrGetLastError(comm);
    std::string err =
        expectError("myrGroupEnd with a send to self and no receive", myrGroupEnd(), myrInvalidUsage, nullptr, "self");
    return err.empty() ? checked(comm, rank, Coll::kAllReduce, salt) : err;
  });
}

TEST(InvalidUsage, SplitArguments) {
  runRanks("", [](myrComm_t comm, int rank, uint64_t salt) -> std::string {
    myrComm_t child = reinterpret_cast<myrComm_t>(0x1);
    std::string err =
        expectError("color -5", myrCommSplit(comm, -5, 0, &child, nullptr), myrInvalidArgument, comm, "color");
    if (err.empty() && child != nullptr) err = "color -5: newcomm was not set to NULL";
    if (err.empty())
      err =
          expectError("NULL newcomm", myrCommSplit(comm, 0, 0, nullptr, nullptr), myrInvalidArgument, comm, "newcomm");
    if (err.empty()) {
      myrGroupStart();
      const myrResult_t res = myrCommSplit(comm, 0, 0, &child, nullptr);
      const myrResult_t ended = myrGroupEnd();
      err = expectError("split inside a group", res, myrInvalidUsage, comm, "group");
      if (err.empty() && ended != myrSuccess) err = std::string("the empty group's end: ") + myrGetErrorString(ended);
    }
    if (err.empty())
      err = expectError("NULL comm", myrCommSplit(nullptr, 0, 0, &child, nullptr), myrInvalidArgument, nullptr, "comm");
    return err.empty() ? checked(comm, rank, Coll::kBroadcast, salt) : err;
  });
}

// Each bad myrCommShrink is refused with its code and a message naming the problem, leaves newcomm NULL and,
// though MYR_SHRINK_ABORT is asked for, leaves the parent running (the checked call after them).
struct BadShrink {
  const char* what;
  std::vector<int> list;
  int count;  // -2: list.size()
  bool nullList;
  int flags;
  myrResult_t want;
  const char* word;
};

std::string badShrinks(myrComm_t comm, int rank) {
  const int me = rank, other = (rank + 1) % kRanks;
  const std::vector<BadShrink> cases = {
      {"negative count", {}, -1, false, MYR_SHRINK_ABORT, myrInvalidArgument, "negative"},
      {"NULL list with count 1", {}, 1, true, MYR_SHRINK_ABORT, myrInvalidArgument, "NULL"},
      {"rank -1", {-1}, -2, false, MYR_SHRINK_ABORT, myrInvalidArgument, "out of range"},
      {"rank nranks", {kRanks}, -2, false, MYR_SHRINK_ABORT, myrInvalidArgument, "out of range"},
      {"a rank twice", {other, other}, -2, false, MYR_SHRINK_ABORT, myrInvalidArgument, "twice"},
      {"this rank", {me}, -2, false, MYR_SHRINK_ABORT, myrInvalidUsage, "must not call"},
      {"every rank", {0, 1, 2}, -2, false, MYR_SHRINK_ABORT, myrInvalidArgument, "every rank"},
      {"flags 2", {other}, -2, false, 2, myrInvalidArgument, "shrinkFlags"},
      {"flags 3", {other}, -2, false, 3, myrInvalidArgument, "shrinkFlags"},
  };
  for (const BadShrink& c : cases) {
    std::vector<int> list = c.list;
    myrComm_t child = reinterpret_cast<myrComm_t>(0x1);
    const int count = c.count == -2 ? static_cast<int>(list.size()) : c.count;
    const myrResult_t res = myrCommShrink(comm, c.nullList ? nullptr : list.data(), count, &child, nullptr, c.flags);
    std::string err = expectError(c.what, res, c.want, comm, c.word);
    if (err.empty() && child != nullptr) err = std::string(c.what) + ": newcomm was not set to NULL";
    if (!err.empty()) return "myrCommShrink, " + err;
  }
  int list[1] = {other};
  std::string err = expectError("NULL newcomm", myrCommShrink(comm, list, 1, nullptr, nullptr, MYR_SHRINK_ABORT),
                                myrInvalidArgument, comm, "newcomm");
  myrComm_t child = nullptr;
  if (err.empty())
    err = expectError("NULL comm", myrCommShrink(nullptr, list, 1, &child, nullptr, MYR_SHRINK_ABORT),
                      myrInvalidArgument, nullptr, "comm");
  if (err.empty()) {
    myrConfig_t config = MYR_CONFIG_INITIALIZER;
    config.timeoutMs = -3;
    err = expectError("a bad config", myrCommShrink(comm, list, 1, &child, &config, MYR_SHRINK_ABORT),
                      myrInvalidArgument, comm, "timeoutMs");
  }
  if (err.empty()) {
    myrGroupStart();
    const myrResult_t res = myrCommShrink(comm, list, 1, &child, nullptr, MYR_SHRINK_ABORT);
    const myrResult_t ended = myrGroupEnd();
    err = expectError("shrink inside a group", res, myrInvalidUsage, comm, "group");
    if (err.empty() && ended != myrSuccess) err = std::string("the empty group's end: ") + myrGetErrorString(ended);
  }
  return err.empty() ? "" : "myrCommShrink, " + err;
}

TEST(InvalidUsage, ShrinkArguments) {
  runRanks("", [](myrComm_t comm, int rank, uint64_t salt) -> std::string {
    const std::string err = badShrinks(comm, rank);
    return err.empty() ? checked(comm, rank, Coll::kAllReduce, salt) : err;
  });
}

// An unknown name: every call is refused, naming it and listing the valid names, and leaves buffers alone.
TEST(InvalidUsage, UnknownAlgorithmName) {
  runRanks("allreduce.ring,allreduce.bogus", [](myrComm_t comm, int, uint64_t) -> std::string {
    std::vector<float> send(100, 1.0f), recv(100, -1.0f);
    std::string err =
        expectError("allreduce", myrAllReduce(send.data(), recv.data(), 100, myrFloat32, myrSum, comm, nullptr),
                    myrInvalidUsage, comm, "allreduce.bogus");
    if (err.empty() && !containsWord(myrGetLastError(comm), "allreduce.ring"))
      err = std::string("the message lists no valid names: ") + myrGetLastError(comm);
    if (err.empty())
      err = expectError("broadcast", myrBroadcast(send.data(), recv.data(), 100, myrFloat32, 0, comm, nullptr),
                        myrInvalidUsage, comm, "allreduce.bogus");
    for (float v : recv) {
      if (err.empty() && v != -1.0f) err = "recvbuff was written";
    }
    return err;
  });
}

// Two algorithms for one collective: that collective is refused, the others run.
TEST(InvalidUsage, TwoAlgorithmsForOneCollective) {
  runRanks("allreduce.ring, allreduce.tree", [](myrComm_t comm, int rank, uint64_t salt) -> std::string {
    std::vector<float> send(100, 1.0f), recv(100, -1.0f);
    std::string err =
        expectError("allreduce", myrAllReduce(send.data(), recv.data(), 100, myrFloat32, myrSum, comm, nullptr),
                    myrInvalidUsage, comm, "two algorithms");
    for (float v : recv) {
      if (err.empty() && v != -1.0f) err = "recvbuff was written";
    }
    if (err.empty()) err = checked(comm, rank, Coll::kGather, salt);
    return err.empty() ? checked(comm, rank, Coll::kScatter, salt + 1) : err;
  });
}

// Names of other collectives' algorithms leave this collective to the tuner; spaces around names are trimmed.
TEST(InvalidUsage, OtherCollectivesAlgorithmIsIgnored) {
  runRanks(" allgather.ring , gather.linear,", [](myrComm_t comm, int rank, uint64_t salt) -> std::string {
    std::string err = checked(comm, rank, Coll::kAllReduce, salt);
    if (err.empty()) err = checked(comm, rank, Coll::kAllGather, salt + 1);
    return err.empty() ? checked(comm, rank, Coll::kBroadcast, salt + 2) : err;
  });
}

}  // namespace
}  // namespace myriad::test
