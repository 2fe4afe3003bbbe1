// MYRIAD_COMM_ID rendezvous without a parent-made id: every forked rank sets MYRIAD_COMM_ID=127.0.0.1:<port>,
// calls myrGetUniqueId itself and joins; rank 0 starts the root at init. Also: two communicators from one
// MYRIAD_COMM_ID share that root, and a port that is taken is an error naming the address and the errno.
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <string>
#include <vector>

#include "myriad/myriad.h"
#include "tests/common/fork_ranks.h"
#include "tests/common/mp_helpers.h"

namespace myriad::test {
namespace {

using namespace std::chrono_literals;

// A float sum whose exact result every rank computes locally: rank r contributes (r+1)*(i%13+1) at i.
std::string checkedSum(myrComm_t comm, int rank, int nranks, size_t count) {
  std::vector<float> send(count), recv(count, -1.0f);
  for (size_t i = 0; i < count; ++i) send[i] = static_cast<float>((rank + 1) * (i % 13 + 1));
  const myrResult_t res = myrAllReduce(send.data(), recv.data(), count, myrFloat32, myrSum, comm, nullptr);
  if (res != myrSuccess) return resultText("myrAllReduce", res, comm);
  const float ranksSum = static_cast<float>(nranks * (nranks + 1) / 2);
  for (size_t i = 0; i < count; ++i) {
    const float want = ranksSum * static_cast<float>(i % 13 + 1);
    if (recv[i] != want)
      return "element " + std::to_string(i) + " is " + std::to_string(recv[i]) + ", expected " + std::to_string(want);
  }
  return "";
}

class CommId : public testing::TestWithParam<Transport> {};

TEST_P(CommId, RanksMeetWithoutAParentMadeId) {
  int port = 0;
  ASSERT_EQ(loopbackSocket(false, &port), 0) << "cannot find a free loopback port";
  constexpr int kRanks = 3;
  auto body = [&](int rank, const myrUniqueId&) -> int {
    useTransport(GetParam());
    myrComm_t comm = nullptr;
    std::string err = joinByCommId(commIdFor(port), kRanks, rank, &comm);
    MYR_CHILD_CHECK(err.empty(), err);
    err = checkedSum(comm, rank, kRanks, 1009);
    MYR_CHILD_CHECK(err.empty(), err);
    const myrResult_t res = myrCommDestroy(comm);
    MYR_CHILD_CHECK(res == myrSuccess, resultText("myrCommDestroy", res, nullptr));
    return 0;
  };
  const ForkOutcome out = forkRanksWithoutId(kRanks, body, 60s, testSeed());
  ASSERT_TRUE(out.allSucceeded()) << "MYRIAD_COMM_ID=" << commIdFor(port) << "\n" << out.describeFailures();
}

// Rank 0 hosts the root once; the second communicator reuses it, in a namespace of its own, while the
// first is still alive.
TEST_P(CommId, TwoCommunicatorsShareOneRoot) {
  int port = 0;
  ASSERT_EQ(loopbackSocket(false, &port), 0) << "cannot find a free loopback port";
  constexpr int kRanks = 3;
  auto body = [&](int rank, const myrUniqueId&) -> int {
    useTransport(GetParam());
    myrComm_t first = nullptr, second = nullptr;
    std::string err = joinByCommId(commIdFor(port), kRanks, rank, &first);
    MYR_CHILD_CHECK(err.empty(), "first: " + err);
    err = joinByCommId(commIdFor(port), kRanks, rank, &second);
    MYR_CHILD_CHECK(err.empty(), "second: " + err);
    for (myrComm_t comm : {second, first, second}) {
      err = checkedSum(comm, rank, kRanks, 4099);
      MYR_CHILD_CHECK(err.empty(), err);
    }
    for (myrComm_t comm : {first, second}) {
      const myrResult_t res = myrCommDestroy(comm);
      MYR_CHILD_CHECK(res == myrSuccess, resultText("myrCommDestroy", res, nullptr));
    }
    return 0;
  };
  const ForkOutcome out = forkRanksWithoutId(kRanks, body, 60s, testSeed());
  ASSERT_TRUE(out.allSucceeded()) << "MYRIAD_COMM_ID=" << commIdFor(port) << "\n" << out.describeFailures();
}

INSTANTIATE_TEST_SUITE_P(Mp, CommId, testing::Values(Transport::kShm, Transport::kTcp),
                         [](const testing::TestParamInfo<Transport>& info) {
                           return std::string(transportName(info.param));
                         });

TEST(CommIdRoot, TakenPortIsAnErrorNamingTheAddress) {
  int port = 0;
  const int holder = loopbackSocket(true, &port);  // the parent listens there for the whole test
  ASSERT_GE(holder, 0) << "cannot listen on a loopback port";
  auto body = [&](int, const myrUniqueId&) -> int {
    myrComm_t comm = nullptr;
    const std::string err = joinByCommId(commIdFor(port), 1, 0, &comm);
    if (err.empty()) (void)myrCommDestroy(comm);
    MYR_CHILD_CHECK(!err.empty(), "rank 0 joined although its root address was taken");
    MYR_CHILD_CHECK(err.find(commIdFor(port)) != std::string::npos, "the error does not name the address: " + err);
    MYR_CHILD_CHECK(err.find("errno") != std::string::npos, "the error does not give the errno: " + err);
    return 0;
  };
  const ForkOutcome out = forkRanksWithoutId(1, body, 30s, testSeed());
  close(holder);
  ASSERT_TRUE(out.allSucceeded()) << out.describeFailures();
}

}  // namespace
}  // namespace myriad::test
