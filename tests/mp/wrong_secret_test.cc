// "Nobody joins who was not invited": an extra process presents the real rendezvous address with a wrong
// secret (bytes 8..23 of the id flipped) as rank 0. It must fail within its init timeout (3 s), while the
// n real ranks still form their communicator and all-reduce correctly.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdlib>
#include <string>

#include "myriad/myriad.h"
#include "tests/common/fork_ranks.h"
#include "tests/common/mp_helpers.h"

namespace myriad::test {
namespace {

using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

constexpr int kSecretBegin = 8;  // id layout: "MYR1" | version | kind | 2 reserved | secret[16] | address
constexpr int kSecretEnd = 24;
constexpr double kIntruderDeadlineSeconds = 3.0 + 5.0;  // its init timeout, plus slack for a busy machine

myrUniqueId withWrongSecret(const myrUniqueId& id) {
  myrUniqueId bad = id;
  for (int i = kSecretBegin; i < kSecretEnd; ++i) bad.internal[i] = static_cast<char>(~bad.internal[i]);
  return bad;
}

int intruderBody(int nranks, const myrUniqueId& id) {
  setenv("MYRIAD_INIT_TIMEOUT_MS", "3000", 1);
  myrComm_t comm = nullptr;
  const auto t0 = Clock::now();
  const myrResult_t res = myrCommInitRank(&comm, nranks, withWrongSecret(id), 0);
  const double seconds = std::chrono::duration<double>(Clock::now() - t0).count();
  if (res == myrSuccess) (void)myrCommAbort(comm);
  MYR_CHILD_CHECK(res != myrSuccess, "the intruder with a wrong secret joined the communicator");
  MYR_CHILD_CHECK(seconds < kIntruderDeadlineSeconds, "the intruder's init took " + std::to_string(seconds) +
                                                          " s to fail (" + myrGetErrorString(res) + ")");
  return 0;
}

int memberBody(Transport transport, int nranks, int rank, const myrUniqueId& id, uint64_t seed) {
  useTransport(transport);
  myrComm_t comm = nullptr;
  std::string err = initComm(&comm, nranks, id, rank);
  MYR_CHILD_CHECK(err.empty(), err);
  const AllReduceCase cases[] = {{myrFloat32, myrSum, 1009, false}, {myrInt32, myrMax, 4099, true}};
  for (const AllReduceCase& c : cases) {
    err = runAllReduceCase(comm, rank, nranks, c, nullptr, seed);
    MYR_CHILD_CHECK(err.empty(), err);
  }
  const myrResult_t res = myrCommDestroy(comm);
  MYR_CHILD_CHECK(res == myrSuccess, resultText("myrCommDestroy", res, nullptr));
  return 0;
}

class WrongSecret : public testing::TestWithParam<Transport> {};

TEST_P(WrongSecret, IntruderIsRejectedMembersProceed) {
  const Transport transport = GetParam();
  const uint64_t seed = testSeed();
  constexpr int kRanks = 3;
  // Child kRanks is the intruder; children 0..kRanks-1 are the invited ranks.
  auto body = [&](int child, const myrUniqueId& id) -> int {
    if (child == kRanks) return intruderBody(kRanks, id);
    return memberBody(transport, kRanks, child, id, seed);
  };
  const ForkOutcome out = forkRanks(kRanks + 1, body, 60s, seed);
  ASSERT_TRUE(out.allSucceeded()) << "(child " << kRanks << " is the intruder)\n" << out.describeFailures();
}

INSTANTIATE_TEST_SUITE_P(Mp, WrongSecret, testing::Values(Transport::kShm, Transport::kTcp),
                         [](const testing::TestParamInfo<Transport>& info) {
                           return std::string(transportName(info.param));
                         });

}  // namespace
}  // namespace myriad::test
