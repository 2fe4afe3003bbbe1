// Bad arguments are refused with myrInvalidArgument and a message naming the argument, and nothing is
// enqueued: the receive buffer stays untouched and a good all-reduce right after still works, on a real
// communicator (blocking and host stream). Bad init arguments fail at once, without using up the id.
#include <gtest/gtest.h>

#include <chrono>
#include <cstring>
#include <string>
#include <vector>

#include "myriad/myriad.h"
#include "tests/common/fork_ranks.h"
#include "tests/common/mp_helpers.h"

namespace myriad::test {
namespace {

using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

constexpr size_t kCount = 257;
constexpr unsigned char kPoison = 0x5A;

struct BadCall {
  const char* what;
  bool nullSend;
  bool nullRecv;
  int type;  // ints, as a C caller may pass them: 99 in an enum-typed object would be undefined behaviour
  int op;
  const char* words[3];  // the message must contain one of them (unused slots: nullptr)
};

const BadCall kBadCalls[] = {
    {"null sendbuff", true, false, myrFloat32, myrSum, {"sendbuff", "send"}},
    {"null recvbuff", false, true, myrFloat32, myrSum, {"recvbuff", "recv"}},
    {"datatype 99", false, false, 99, myrSum, {"datatype", "dtype", "type"}},
    {"datatype myrNumTypes", false, false, myrNumTypes, myrSum, {"datatype", "dtype", "type"}},
    {"op 99", false, false, myrFloat32, 99, {"op"}},
    {"op myrNumOps", false, false, myrFloat32, myrNumOps, {"op"}},
};

std::string anyOf(const char* const (&words)[3]) {
  std::string text;
  for (const char* w : words) {
    if (w != nullptr) text += std::string(text.empty() ? "" : " or ") + "\"" + w + "\"";
  }
  return text;
}

// One bad call, then checks: the code, the message, the untouched buffer, and a good call after it.
int checkBadCall(myrComm_t comm, myrStream_t stream, int rank, int nranks, const BadCall& bad, uint64_t salt) {
  std::vector<float> send(kCount, 1.0f);
  std::vector<unsigned char> recv(kCount * sizeof(float), kPoison);
  const myrResult_t res =
      myrAllReduce(bad.nullSend ? nullptr : send.data(), bad.nullRecv ? nullptr : recv.data(), kCount,
                   static_cast<myrDataType_t>(bad.type), static_cast<myrRedOp_t>(bad.op), comm, stream);
  const char* lastText = myrGetLastError(comm);
  const std::string last = lastText != nullptr ? lastText : "";
  MYR_CHILD_CHECK(res == myrInvalidArgument, std::string(bad.what) + ": " + resultText("myrAllReduce", res, comm));
  bool named = false;
  for (const char* w : bad.words) named = named || (w != nullptr && containsWord(last, w));
  MYR_CHILD_CHECK(named,
                  std::string(bad.what) + ": the last error \"" + last + "\" mentions none of " + anyOf(bad.words));
  if (stream != nullptr) {
    const myrResult_t synced = myrStreamSynchronize(stream);
    MYR_CHILD_CHECK(synced == myrSuccess, std::string(bad.what) + ": the stream went bad: " +
                                              resultText("myrStreamSynchronize", synced, comm));
  }
  for (unsigned char b : recv) MYR_CHILD_CHECK(b == kPoison, std::string(bad.what) + ": recvbuff was written");
  const std::string err = runAllReduceCase(comm, rank, nranks, {myrFloat32, myrSum, 1009, false}, stream, salt);
  MYR_CHILD_CHECK(err.empty(), std::string("after ") + bad.what + ": " + err);
  return 0;
}

int checkNullComm() {
  std::vector<float> send(kCount, 1.0f);
  std::vector<float> recv(kCount);
  myrResult_t res = myrAllReduce(send.data(), recv.data(), kCount, myrFloat32, myrSum, nullptr, nullptr);
  MYR_CHILD_CHECK(res == myrInvalidArgument, "null comm: " + resultText("myrAllReduce", res, nullptr));
  int value = -1;
  res = myrCommCount(nullptr, &value);
  MYR_CHILD_CHECK(res == myrInvalidArgument, "null comm: " + resultText("myrCommCount", res, nullptr));
  res = myrCommUserRank(nullptr, &value);
  MYR_CHILD_CHECK(res == myrInvalidArgument, "null comm: " + resultText("myrCommUserRank", res, nullptr));
  myrResult_t asyncError = myrSuccess;
  res = myrCommGetAsyncError(nullptr, &asyncError);
  MYR_CHILD_CHECK(res == myrInvalidArgument, "null comm: " + resultText("myrCommGetAsyncError", res, nullptr));
  MYR_CHILD_CHECK(myrGetLastError(nullptr) != nullptr, "myrGetLastError(NULL) returned NULL");
  return 0;
}

class InvalidArgs : public testing::TestWithParam<bool> {};  // true: host stream

TEST_P(InvalidArgs, RefusedOnALiveCommunicator) {
  const bool hostStream = GetParam();
  const uint64_t seed = testSeed();
  constexpr int kRanks = 2;
  auto body = [&](int rank, const myrUniqueId& id) -> int {
    myrComm_t comm = nullptr;
    std::string err = initComm(&comm, kRanks, id, rank);
    MYR_CHILD_CHECK(err.empty(), err);
    myrStream_t stream = nullptr;
    if (hostStream) MYR_CHILD_CHECK(myrStreamCreate(&stream) == myrSuccess, "myrStreamCreate failed");
    for (const BadCall& bad : kBadCalls) {
      if (checkBadCall(comm, stream, rank, kRanks, bad, seed) != 0) return 1;
    }
    if (checkNullComm() != 0) return 1;
    int value = 0;
    myrResult_t res = myrCommCount(comm, nullptr);
    MYR_CHILD_CHECK(res == myrInvalidArgument, "null count: " + resultText("myrCommCount", res, comm));
    res = myrCommUserRank(comm, nullptr);
    MYR_CHILD_CHECK(res == myrInvalidArgument, "null rank: " + resultText("myrCommUserRank", res, comm));
    MYR_CHILD_CHECK(myrCommCount(comm, &value) == myrSuccess && value == kRanks, "myrCommCount broke");
    err = runAllReduceCase(comm, rank, kRanks, {myrInt32, myrMax, 1009, true}, stream, seed + 1);
    MYR_CHILD_CHECK(err.empty(), "at the end: " + err);
    if (stream != nullptr) MYR_CHILD_CHECK(myrStreamDestroy(stream) == myrSuccess, "myrStreamDestroy failed");
    res = myrCommDestroy(comm);
    MYR_CHILD_CHECK(res == myrSuccess, resultText("myrCommDestroy", res, nullptr));
    return 0;
  };
  const ForkOutcome out = forkRanks(kRanks, body, 60s, seed);
  ASSERT_TRUE(out.allSucceeded()) << out.describeFailures();
}

INSTANTIATE_TEST_SUITE_P(Mp, InvalidArgs, testing::Bool(), [](const testing::TestParamInfo<bool>& info) {
  return std::string(info.param ? "hoststream" : "blocking");
});

// Bad init arguments: refused at once with myrInvalidArgument, *comm left NULL, and the id still good.
TEST(InvalidInitArgs, RefusedWithoutUsingTheId) {
  const uint64_t seed = testSeed();
  auto body = [&](int, const myrUniqueId& id) -> int {
    struct Bad {
      const char* what;
      int nranks;
      int rank;
    };
    const Bad bads[] = {{"rank == nranks", 2, 2},
                        {"rank > nranks", 2, 7},
                        {"rank < 0", 2, -1},
                        {"nranks == 0", 0, 0},
                        {"nranks < 0", -1, 0}};
    const auto t0 = Clock::now();
    for (const Bad& bad : bads) {
      myrComm_t comm = nullptr;
      const myrResult_t res = myrCommInitRank(&comm, bad.nranks, id, bad.rank);
      MYR_CHILD_CHECK(res == myrInvalidArgument,
                      std::string(bad.what) + ": " + resultText("myrCommInitRank", res, nullptr));
      MYR_CHILD_CHECK(comm == nullptr, std::string(bad.what) + ": *comm was set");
    }
    myrResult_t res = myrCommInitRank(nullptr, 1, id, 0);
    MYR_CHILD_CHECK(res == myrInvalidArgument, "null comm pointer: " + resultText("myrCommInitRank", res, nullptr));
    myrUniqueId zero;
    std::memset(&zero, 0, sizeof(zero));
    myrComm_t comm = nullptr;
    res = myrCommInitRank(&comm, 1, zero, 0);
    MYR_CHILD_CHECK(res == myrInvalidArgument, "all-zero id: " + resultText("myrCommInitRank", res, nullptr));
    const double seconds = std::chrono::duration<double>(Clock::now() - t0).count();
    MYR_CHILD_CHECK(seconds < 2.0, "the refused inits took " + std::to_string(seconds) + " s");
    const std::string err = initComm(&comm, 1, id, 0);
    MYR_CHILD_CHECK(err.empty(), "the good init after the bad ones: " + err);
    const std::string ran = runAllReduceCase(comm, 0, 1, {myrFloat32, myrSum, 1009, false}, nullptr, seed);
    MYR_CHILD_CHECK(ran.empty(), ran);
    res = myrCommDestroy(comm);
    MYR_CHILD_CHECK(res == myrSuccess, resultText("myrCommDestroy", res, nullptr));
    return 0;
  };
  const ForkOutcome out = forkRanks(1, body, 30s, seed);
  ASSERT_TRUE(out.allSucceeded()) << out.describeFailures();
}

}  // namespace
}  // namespace myriad::test
