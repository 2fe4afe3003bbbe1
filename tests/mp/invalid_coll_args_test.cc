// Bad arguments to the collectives other than all-reduce, to point-to-point calls, groups and splits: each
// is refused with its documented code and a message naming the problem, nothing is enqueued (the buffers stay
// untouched, the stream stays good) and a good call of the same kind right after works. Every rank makes the
// same bad call, so that no rank is left waiting in a collective that its peers refused.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdint>
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
constexpr size_t kCount = 64;  // elements per block
constexpr unsigned char kPoison = 0x5A;
const auto kBadType = static_cast<myrDataType_t>(99);
const auto kBadOp = static_cast<myrRedOp_t>(99);

struct Ctx {
  myrComm_t comm;
  myrStream_t stream;
  int rank;
  unsigned char* send;  // kRanks * kCount floats each, poisoned
  unsigned char* recv;
  float* sendF() const { return reinterpret_cast<float*>(send); }
  float* recvF() const { return reinterpret_cast<float*>(recv); }
};

struct BadCall {
  const char* what;
  myrResult_t code;
  const char* word;  // the message must contain it (any case)
  Coll follow;       // the good call made right after
  std::function<myrResult_t(const Ctx&)> call;
};

std::vector<BadCall> badCalls() {
  const size_t ok[kRanks] = {kCount, kCount, kCount}, at[kRanks] = {0, kCount, 2 * kCount};
  std::vector<BadCall> b;
  auto add = [&](const char* what, myrResult_t code, const char* word, Coll follow,
                 std::function<myrResult_t(const Ctx&)> call) {
    b.push_back({what, code, word, follow, call});
  };
  const myrResult_t kArg = myrInvalidArgument;
  // Roots out of range.
  add("broadcast root -1", kArg, "root", Coll::kBroadcast,
      [](const Ctx& c) { return myrBroadcast(c.send, c.recv, kCount, myrFloat32, -1, c.comm, c.stream); });
  add("broadcast root nranks", kArg, "root", Coll::kBroadcast,
      [](const Ctx& c) { return myrBroadcast(c.send, c.recv, kCount, myrFloat32, kRanks, c.comm, c.stream); });
  add("reduce root nranks", kArg, "root", Coll::kReduce,
      [](const Ctx& c) { return myrReduce(c.send, c.recv, kCount, myrFloat32, myrSum, kRanks, c.comm, c.stream); });
  add("gather root -1", kArg, "root", Coll::kGather,
      [](const Ctx& c) { return myrGather(c.send, c.recv, kCount, myrFloat32, -1, c.comm, c.stream); });
  add("scatter root 1000", kArg, "root", Coll::kScatter,
      [](const Ctx& c) { return myrScatter(c.send, c.recv, kCount, myrFloat32, 1000, c.comm, c.stream); });
  // NULL buffers that every rank uses, with count > 0.
  add("broadcast NULL recvbuff", kArg, "recvbuff", Coll::kBroadcast,
      [](const Ctx& c) { return myrBroadcast(c.send, nullptr, kCount, myrFloat32, 0, c.comm, c.stream); });
  add("reduce NULL sendbuff", kArg, "sendbuff", Coll::kReduce,
      [](const Ctx& c) { return myrReduce(nullptr, c.recv, kCount, myrFloat32, myrSum, 0, c.comm, c.stream); });
  add("allgather NULL sendbuff", kArg, "sendbuff", Coll::kAllGather,
      [](const Ctx& c) { return myrAllGather(nullptr, c.recv, kCount, myrFloat32, c.comm, c.stream); });
  add("allgather NULL recvbuff", kArg, "recvbuff", Coll::kAllGather,
      [](const Ctx& c) { return myrAllGather(c.send, nullptr, kCount, myrFloat32, c.comm, c.stream); });
  add("reducescatter NULL sendbuff", kArg, "sendbuff", Coll::kReduceScatter,
      [](const Ctx& c) { return myrReduceScatter(nullptr, c.recv, kCount, myrFloat32, myrSum, c.comm, c.stream); });
  add("reducescatter NULL recvbuff", kArg, "recvbuff", Coll::kReduceScatter,
      [](const Ctx& c) { return myrReduceScatter(c.send, nullptr, kCount, myrFloat32, myrSum, c.comm, c.stream); });
  add("alltoall NULL sendbuff", kArg, "sendbuff", Coll::kAllToAll,
      [](const Ctx& c) { return myrAllToAll(nullptr, c.recv, kCount, myrFloat32, c.comm, c.stream); });
  add("gather NULL sendbuff", kArg, "sendbuff", Coll::kGather,
      [](const Ctx& c) { return myrGather(nullptr, c.recv, kCount, myrFloat32, 0, c.comm, c.stream); });
  add("scatter NULL recvbuff", kArg, "recvbuff", Coll::kScatter,
      [](const Ctx& c) { return myrScatter(c.send, nullptr, kCount, myrFloat32, 0, c.comm, c.stream); });
  add("send NULL buffer", kArg, "sendbuff", Coll::kAllReduce,
      [](const Ctx& c) { return myrSend(nullptr, kCount, myrFloat32, (c.rank + 1) % kRanks, c.comm, c.stream); });
  add("alltoallv NULL sendbuff", kArg, "sendbuff", Coll::kAllToAllv,
      [ok, at](const Ctx& c) { return myrAllToAllv(nullptr, ok, at, c.recv, ok, at, myrFloat32, c.comm, c.stream); });
  // Partial overlaps that are not the in-place form.
  add("allreduce send = recv + 1", kArg, "overlap", Coll::kAllReduce,
      [](const Ctx& c) { return myrAllReduce(c.recvF() + 1, c.recv, kCount, myrFloat32, myrSum, c.comm, c.stream); });
  add("allgather send = recv + rank*count + 1", kArg, "overlap", Coll::kAllGather, [](const Ctx& c) {
    return myrAllGather(c.recvF() + c.rank * kCount + 1, c.recv, kCount, myrFloat32, c.comm, c.stream);
  });
  add("allgather send = recv off rank 0", kArg, "overlap", Coll::kAllGather, [](const Ctx& c) {
    // sendbuff == recvbuff is the in-place form on rank 0 only: the others shift by one element.
    return myrAllGather(c.recvF() + (c.rank == 0 ? 1 : 0), c.recv, kCount, myrFloat32, c.comm, c.stream);
  });
  add("reducescatter recv = send + rank*count + 1", kArg, "overlap", Coll::kReduceScatter, [](const Ctx& c) {
    return myrReduceScatter(c.send, c.sendF() + c.rank * kCount + 1, kCount, myrFloat32, myrSum, c.comm, c.stream);
  });
  add("alltoall send = recv + 3", kArg, "overlap", Coll::kAllToAll,
      [](const Ctx& c) { return myrAllToAll(c.recvF() + 3, c.recv, kCount, myrFloat32, c.comm, c.stream); });
  add("alltoallv send = recv + 1", kArg, "overlap", Coll::kAllToAllv, [ok, at](const Ctx& c) {
    return myrAllToAllv(c.recvF() + 1, ok, at, c.recv, ok, at, myrFloat32, c.comm, c.stream);
  });
  // Peers out of range, a send to self outside a group.
  add("send peer nranks", kArg, "peer", Coll::kAllReduce,
      [](const Ctx& c) { return myrSend(c.send, kCount, myrFloat32, kRanks, c.comm, c.stream); });
  add("send peer -1", kArg, "peer", Coll::kAllReduce,
      [](const Ctx& c) { return myrSend(c.send, kCount, myrFloat32, -1, c.comm, c.stream); });
  add("recv peer nranks", kArg, "peer", Coll::kAllReduce,
      [](const Ctx& c) { return myrRecv(c.recv, kCount, myrFloat32, kRanks + 4, c.comm, c.stream); });
  add("send to self outside a group", myrInvalidUsage, "self", Coll::kAllReduce,
      [](const Ctx& c) { return myrSend(c.send, kCount, myrFloat32, c.rank, c.comm, c.stream); });
  // Unknown types and operators.
  add("broadcast datatype 99", kArg, "datatype", Coll::kBroadcast,
      [](const Ctx& c) { return myrBroadcast(c.send, c.recv, kCount, kBadType, 0, c.comm, c.stream); });
  add("allgather datatype myrNumTypes", kArg, "datatype", Coll::kAllGather,
      [](const Ctx& c) { return myrAllGather(c.send, c.recv, kCount, myrNumTypes, c.comm, c.stream); });
  add("alltoall datatype 99", kArg, "datatype", Coll::kAllToAll,
      [](const Ctx& c) { return myrAllToAll(c.send, c.recv, kCount, kBadType, c.comm, c.stream); });
  add("scatter datatype -1", kArg, "datatype", Coll::kScatter, [](const Ctx& c) {
    return myrScatter(c.send, c.recv, kCount, static_cast<myrDataType_t>(-1), 0, c.comm, c.stream);
  });
  add("recv datatype 99", kArg, "datatype", Coll::kAllReduce,
      [](const Ctx& c) { return myrRecv(c.recv, kCount, kBadType, (c.rank + 1) % kRanks, c.comm, c.stream); });
  add("reduce op 99", kArg, "op", Coll::kReduce,
      [](const Ctx& c) { return myrReduce(c.send, c.recv, kCount, myrFloat32, kBadOp, 0, c.comm, c.stream); });
  add("reducescatter op myrNumOps", kArg, "op", Coll::kReduceScatter,
      [](const Ctx& c) { return myrReduceScatter(c.send, c.recv, kCount, myrFloat32, myrNumOps, c.comm, c.stream); });
  // All-to-allv count arrays.
  add("alltoallv NULL sendcounts", kArg, "sendcounts", Coll::kAllToAllv, [ok, at](const Ctx& c) {
    return myrAllToAllv(c.send, nullptr, at, c.recv, ok, at, myrFloat32, c.comm, c.stream);
  });
  add("alltoallv NULL sdispls", kArg, "sdispls", Coll::kAllToAllv, [ok, at](const Ctx& c) {
    return myrAllToAllv(c.send, ok, nullptr, c.recv, ok, at, myrFloat32, c.comm, c.stream);
  });
  add("alltoallv NULL recvcounts", kArg, "recvcounts", Coll::kAllToAllv, [ok, at](const Ctx& c) {
    return myrAllToAllv(c.send, ok, at, c.recv, nullptr, at, myrFloat32, c.comm, c.stream);
  });
  add("alltoallv NULL rdispls", kArg, "rdispls", Coll::kAllToAllv, [ok, at](const Ctx& c) {
    return myrAllToAllv(c.send, ok, at, c.recv, ok, nullptr, myrFloat32, c.comm, c.stream);
  });
  add("alltoallv sendcounts[rank] != recvcounts[rank]", kArg, "sendcounts", Coll::kAllToAllv, [at](const Ctx& c) {
    const size_t sc[kRanks] = {kCount, kCount, kCount};
    size_t rc[kRanks] = {kCount, kCount, kCount};
    rc[c.rank] = kCount - 1;
    return myrAllToAllv(c.send, sc, at, c.recv, rc, at, myrFloat32, c.comm, c.stream);
  });
  add("allgather count too large", kArg, "large", Coll::kAllGather,
      [](const Ctx& c) { return myrAllGather(c.send, c.recv, SIZE_MAX / 2, myrFloat32, c.comm, c.stream); });
  // No communicator.
  add("broadcast NULL comm", kArg, "comm", Coll::kBroadcast,
      [](const Ctx& c) { return myrBroadcast(c.send, c.recv, kCount, myrFloat32, 0, nullptr, c.stream); });
  add("barrier NULL comm", kArg, "comm", Coll::kBarrier, [](const Ctx& c) { return myrBarrier(nullptr, c.stream); });
  return b;
}

// One bad call: the code, the message, untouched buffers and stream, then a good call of the same kind.
std::string checkBadCall(const Ctx& c, const BadCall& bad, uint64_t salt) {
  const std::vector<unsigned char> sendBefore(c.send, c.send + kRanks * kCount * sizeof(float));
  const myrResult_t res = bad.call(c);
  const bool nullComm = containsWord(bad.what, "NULL comm");
  const std::string last = myrGetLastError(nullComm ? nullptr : c.comm);
  const std::string what = std::string(bad.what) + ": ";
  if (res != bad.code)
    return what + "want " + myrGetErrorString(bad.code) + ", got " + resultText("the call", res, c.comm);
  if (!containsWord(last, bad.word)) return what + "the last error \"" + last + "\" does not mention " + bad.word;
  const std::string synced = syncStream(c.stream, c.comm);
  if (!synced.empty()) return what + "the stream went bad: " + synced;
  for (size_t i = 0; i < kRanks * kCount * sizeof(float); ++i) {
    if (c.recv[i] != kPoison) return what + "recvbuff byte " + std::to_string(i) + " was written";
    if (c.send[i] != sendBefore[i]) return what + "sendbuff byte " + std::to_string(i) + " was written";
  }
  const std::string err =
      runCollCase(c.comm, c.rank, kRanks, {bad.follow, myrFloat32, myrSum, 1009, 1, false}, c.stream, salt);
  return err.empty() ? "" : "after " + what + err;
}

class InvalidCollArgs : public testing::TestWithParam<bool> {};  // true: host stream

TEST_P(InvalidCollArgs, RefusedAndNothingEnqueued) {
  const bool hostStream = GetParam();
  const uint64_t seed = testSeed();
  const std::vector<BadCall> bads = badCalls();
  auto body = [&](int rank, const myrUniqueId& id) -> int {
    myrComm_t comm = nullptr;
    std::string err = initComm(&comm, kRanks, id, rank);
    MYR_CHILD_CHECK(err.empty(), err);
    myrStream_t stream = nullptr;
    err = makeStream(hostStream, &stream);
    MYR_CHILD_CHECK(err.empty(), err);
    std::vector<unsigned char> send(kRanks * kCount * sizeof(float), 0x11), recv(send.size(), kPoison);
    for (size_t i = 0; i < send.size(); ++i) send[i] = static_cast<unsigned char>(i * 7);
    const Ctx ctx{comm, stream, rank, send.data(), recv.data()};
    for (size_t i = 0; i < bads.size(); ++i) {
      err = checkBadCall(ctx, bads[i], seed + i);
      MYR_CHILD_CHECK(err.empty(), err);
    }
    err = finishComm(comm, stream);
    MYR_CHILD_CHECK(err.empty(), err);
    return 0;
  };
  const ForkOutcome out = forkRanks(kRanks, body, 60s, seed);
  ASSERT_TRUE(out.allSucceeded()) << out.describeFailures();
}

INSTANTIATE_TEST_SUITE_P(Mp, InvalidCollArgs, testing::Bool(), [](const testing::TestParamInfo<bool>& info) {
  return std::string(info.param ? "hoststream" : "blocking");
});

}  // namespace
}  // namespace myriad::test
