// Without a usable RDMA device the library still loads and works: MYRIAD_NET=auto falls back to tcp, and
// MYRIAD_NET=rdma fails myrCommInitRank with a message that says why. "No device" is made by excluding every
// device (MYRIAD_IB_HCA=^, which matches all names), so the tests run the same on any machine; one more
// runs with no filter where the machine truly has no RDMA device.
#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <string>

#include "myriad/myriad.h"
#include "tests/common/coll_check.h"
#include "tests/common/fork_ranks.h"
#include "tests/common/mp_helpers.h"

namespace myriad::test {
namespace {

using namespace std::chrono_literals;

bool machineHasRdmaDevices() {
  std::error_code ec;
  return std::filesystem::exists("/sys/class/infiniband", ec) &&
         !std::filesystem::is_empty("/sys/class/infiniband", ec);
}

// Runs the quick all-reduce and all-to-all cases on 3 ranks under MYRIAD_NET=auto with `hca` (and, if
// given, MYRIAD_NET_PORTS=`ports`).
void expectTcpFallback(const char* hca, const char* ports = nullptr) {
  const uint64_t seed = testSeed();
  auto cases = collCases(Coll::kAllReduce, 3, true);
  auto more = collCases(Coll::kAllToAll, 3, true);
  cases.insert(cases.end(), more.begin(), more.end());
  auto body = [&](int rank, const myrUniqueId& id) -> int {
    setenv("MYRIAD_NET", "auto", 1);
    setenv("MYRIAD_DISABLE_SHM", "1", 1);
    if (hca)
      setenv("MYRIAD_IB_HCA", hca, 1);
    else
      unsetenv("MYRIAD_IB_HCA");
    if (ports) setenv("MYRIAD_NET_PORTS", ports, 1);
    return runInChild(3, rank, id, false, [&](myrComm_t comm, myrStream_t stream) {
      return runCollCases(comm, rank, 3, cases, stream, seed);
    });
  };
  const ForkOutcome out = forkRanks(3, body, 120s, seed);
  ASSERT_TRUE(out.allSucceeded()) << out.describeFailures();
}

TEST(RdmaFallback, AutoUsesTcpWhenEveryDeviceIsExcluded) {
  expectTcpFallback("^");
}

// tcp source ports below RoCEv2's range (as the fabric benchmarks pin) are no concern of an unused rdma.
TEST(RdmaFallback, TcpPortsBelowRoceRangeDoNotStopTheFallback) {
  expectTcpFallback("^", "20464,20465,20466,20467,20468");
}

TEST(RdmaFallback, AutoUsesTcpOnAMachineWithoutDevices) {
  if (machineHasRdmaDevices()) GTEST_SKIP() << "this machine has RDMA devices (/sys/class/infiniband is not empty)";
  expectTcpFallback(nullptr);
}

TEST(RdmaFallback, ForcedRdmaWithoutDeviceFailsInitSayingWhy) {
  const uint64_t seed = testSeed();
  auto body = [&](int rank, const myrUniqueId& id) -> int {
    setenv("MYRIAD_NET", "rdma", 1);
    setenv("MYRIAD_DISABLE_SHM", "1", 1);
    setenv("MYRIAD_IB_HCA", "^", 1);
    myrComm_t comm = nullptr;
    myrResult_t r = myrCommInitRank(&comm, 2, id, rank);
    MYR_CHILD_CHECK(r != myrSuccess, "init succeeded with every RDMA device excluded");
    const char* text = myrGetLastError(nullptr);
    std::string why = text ? text : "";
    childReport(why);
    MYR_CHILD_CHECK(why.find("MYRIAD_NET=rdma") != std::string::npos, "the error does not name MYRIAD_NET: " + why);
    MYR_CHILD_CHECK(why.find("rdma: no ") != std::string::npos || why.find("libibverbs") != std::string::npos ||
                        why.find("without libibverbs-dev") != std::string::npos,
                    "the error does not say why: " + why);
    return 0;
  };
  const ForkOutcome out = forkRanks(2, body, 60s, seed);
  // Rank 0 may also see its peer vanish from the rendezvous; each must have failed with the reason.
  ASSERT_TRUE(out.allSucceeded()) << out.describeFailures();
}

TEST(RdmaFallback, MalformedHcaListIsAnInitError) {
  const uint64_t seed = testSeed();
  auto body = [&](int rank, const myrUniqueId& id) -> int {
    setenv("MYRIAD_NET", "auto", 1);
    setenv("MYRIAD_IB_HCA", "mlx5_0:x", 1);
    myrComm_t comm = nullptr;
    myrResult_t r = myrCommInitRank(&comm, 1, id, rank);
    MYR_CHILD_CHECK(r == myrInvalidArgument, resultText("myrCommInitRank", r, nullptr));
    const char* text = myrGetLastError(nullptr);
    MYR_CHILD_CHECK(text && std::string(text).find("MYRIAD_IB_HCA") != std::string::npos, text ? text : "(none)");
    return 0;
  };
  const ForkOutcome out = forkRanks(1, body, 60s, seed);
  ASSERT_TRUE(out.allSucceeded()) << out.describeFailures();
}

}  // namespace
}  // namespace myriad::test
