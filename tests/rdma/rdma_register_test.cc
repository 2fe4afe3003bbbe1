// Memory registrations over Soft-RoCE (inside the VM): buffers registered with myrCommRegister are
// registered with the NIC once, not per message (counted from the transport's own log line at destroy);
// and a buffer freed and mapped again at the same address gives right results after every registration
// pattern (tests/common/remap_check.h) — except with the unsafe MYRIAD_IB_REG_CACHE=1 and no deregistration,
// where the check must see the stale registration (the control that shows the check can fail).
#include <gtest/gtest.h>
#include <stdlib.h>
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <fstream>
#include <iostream>
#include <regex>
#include <string>
#include <vector>

#include "myriad/myriad.h"
#include "tests/common/fork_ranks.h"
#include "tests/common/mp_helpers.h"
#include "tests/common/remap_check.h"
#include "tests/rdma/rdma_env.h"

namespace myriad::test {
namespace {

using namespace std::chrono_literals;

struct RemapParam {
  FirstBuffer how;
  bool regCache;     // MYRIAD_IB_REG_CACHE
  bool expectStale;  // the control: the unsafe cache and nothing that tells it the memory went
};

class RdmaRemap : public testing::TestWithParam<RemapParam> {};

TEST_P(RdmaRemap, FreedAndRemappedBuffer) {
  if (!rxeReady()) GTEST_SKIP() << "needs Soft-RoCE devices rxe1/rxe2 (run inside tests/rdma/vm/run-in-vm --rxe)";
  const RemapParam p = GetParam();
  const uint64_t seed = testSeed();
  auto body = [&](int rank, const myrUniqueId& id) -> int {
    useRdma(rank, 2);
    setenv("MYRIAD_TIMEOUT_MS", "60000", 1);
    setenv("MYRIAD_IB_REG_CACHE", p.regCache ? "1" : "0", 1);
    return runInChild(2, rank, id, false, [&](myrComm_t comm, myrStream_t) -> std::string {
      const RemapOutcome out = runRemapRounds(comm, rank, 2, p.how, 65537, seed);
      if (!p.expectStale) return out.error;
      if (out.stale) return "";
      return out.error.empty() ? "the unsafe cache without deregistration gave right results after the remap: "
                                 "this check cannot see a stale registration"
                               : out.error;
    });
  };
  const ForkOutcome out = forkRanks(2, body, 240s, seed);
  ASSERT_TRUE(out.allSucceeded()) << out.describeFailures();
}

INSTANTIATE_TEST_SUITE_P(Rxe, RdmaRemap,
                         testing::Values(RemapParam{FirstBuffer::kPlain, false, false},
                                         RemapParam{FirstBuffer::kRegistered, false, false},
                                         RemapParam{FirstBuffer::kRegistered, true, false},
                                         RemapParam{FirstBuffer::kRegisteredAfterUse, true, false},
                                         RemapParam{FirstBuffer::kPlain, true, true}),
                         [](const testing::TestParamInfo<RemapParam>& i) {
                           return std::string(firstBufferName(i.param.how)) + (i.param.regCache ? "_regcache" : "") +
                                  (i.param.expectStale ? "_control" : "");
                         });

// The counts a process logged in its "memory registrations" line at destroy.
struct RegCounts {
  long registrations = -1, buffers = 0, inRegistered = 0;
};

// This test process's log file: MYRIAD_DEBUG_FILE with %h and %p expanded as the library does. The test
// process configures logging first (myrGetUniqueId), so the forked ranks write there too; lines start with
// "host:pid:rank".
std::string logFile() {
  const char* pattern = std::getenv("MYRIAD_DEBUG_FILE");
  if (!pattern) return "";
  char host[256] = "";
  gethostname(host, sizeof(host) - 1);
  std::string out;
  for (const char* c = pattern; *c; ++c) {
    if (c[0] == '%' && c[1] == 'h') {
      out += host, ++c;
    } else if (c[0] == '%' && c[1] == 'p') {
      out += std::to_string(getpid()), ++c;
    } else {
      out += *c;
    }
  }
  return out;
}

RegCounts countsOf(const std::string& path, pid_t pid) {
  std::ifstream in(path);
  const std::regex line(
      R"(^[^:]*:(\d+):\S+ .*memory registrations: (\d+) for (\d+) message buffers \((\d+) in registered buffers)");
  RegCounts c;
  std::string text;
  while (std::getline(in, text)) {
    std::smatch m;
    if (std::regex_search(text, m, line) && std::stol(m[1]) == pid)
      c = {std::stol(m[2]), std::stol(m[3]), std::stol(m[4])};
  }
  return c;
}

// 20 all-reduces and 20 send/recv rounds on the same buffers: once unregistered, once registered.
std::string traffic(myrComm_t comm, int rank, std::vector<float>& in, std::vector<float>& out) {
  for (int i = 0; i < 20; ++i) {
    std::fill(in.begin(), in.end(), static_cast<float>(rank + i));
    myrResult_t r = myrAllReduce(in.data(), out.data(), in.size(), myrFloat32, myrSum, comm, nullptr);
    if (r != myrSuccess) return resultText("myrAllReduce", r, comm);
    if (out[in.size() / 2] != static_cast<float>(1 + 2 * i)) return "all-reduce " + std::to_string(i) + " is wrong";
    myrGroupStart();
    myrSend(in.data(), in.size(), myrFloat32, 1 - rank, comm, nullptr);
    myrRecv(out.data(), out.size(), myrFloat32, 1 - rank, comm, nullptr);
    r = myrGroupEnd();
    if (r != myrSuccess) return resultText("send/recv", r, comm);
    if (out[7] != static_cast<float>(1 - rank + i)) return "send/recv " + std::to_string(i) + " is wrong";
  }
  return "";
}

// One run of 2 ranks; the counts each logged at destroy, by rank.
std::vector<RegCounts> runCounted(bool reg, uint64_t seed) {
  auto body = [&](int rank, const myrUniqueId& id) -> int {
    useRdma(rank, 2);
    setenv("MYRIAD_TIMEOUT_MS", "60000", 1);
    std::vector<float> in(size_t{1} << 18), out(in.size());  // 1 MiB each
    return runInChild(2, rank, id, false, [&](myrComm_t comm, myrStream_t) -> std::string {
      void* handles[2] = {nullptr, nullptr};
      if (reg) {
        myrResult_t r = myrCommRegister(comm, in.data(), in.size() * sizeof(float), &handles[0]);
        if (r == myrSuccess) r = myrCommRegister(comm, out.data(), out.size() * sizeof(float), &handles[1]);
        if (r != myrSuccess) return resultText("myrCommRegister", r, comm);
      }
      std::string err = traffic(comm, rank, in, out);
      if (!err.empty() || !reg) return err;
      for (void* h : handles)
        if (myrResult_t r = myrCommDeregister(comm, h); r != myrSuccess)
          return resultText("myrCommDeregister", r, comm);
      return "";
    });
  };
  const ForkOutcome out = forkRanks(2, body, 240s, seed);
  EXPECT_TRUE(out.allSucceeded()) << out.describeFailures();
  std::vector<RegCounts> counts(2);
  for (const auto& r : out.ranks) {
    counts[static_cast<size_t>(r.rank)] = countsOf(logFile(), r.pid);
    EXPECT_GE(counts[static_cast<size_t>(r.rank)].registrations, 0)
        << "rank " << r.rank << " (pid " << r.pid << ") logged no registration summary in " << logFile();
  }
  return counts;
}

// Run by vm-suite on its own, with MYRIAD_DEBUG=INFO MYRIAD_DEBUG_SUBSYS=NET MYRIAD_DEBUG_FILE=<dir>/x.%p.log.
TEST(RdmaRegister, RegisteredBuffersAreRegisteredOnce) {
  if (!rxeReady()) GTEST_SKIP() << "needs Soft-RoCE devices rxe1/rxe2 (run inside tests/rdma/vm/run-in-vm --rxe)";
  const char* level = std::getenv("MYRIAD_DEBUG");
  ASSERT_TRUE(level && std::string(level) == "INFO" && !logFile().empty())
      << "needs MYRIAD_DEBUG=INFO and MYRIAD_DEBUG_FILE (with NET logged): the counts come from the log";
  const uint64_t seed = testSeed();
  const std::vector<RegCounts> plain = runCounted(false, seed), reg = runCounted(true, seed);
  for (int rank = 0; rank < 2; ++rank) {
    const RegCounts& p = plain[static_cast<size_t>(rank)];
    const RegCounts& r = reg[static_cast<size_t>(rank)];
    std::cout << "note: rank " << rank << ": unregistered " << p.registrations << " registrations for " << p.buffers
              << " message buffers; registered " << r.registrations << " for " << r.buffers << "\n";
    // 40 calls; the 20 send/recv rounds alone use the user's buffers 40 times.
    EXPECT_GE(p.buffers - p.inRegistered, 40) << "rank " << rank << ": unregistered buffers found pinned";
    EXPECT_GE(p.registrations, p.buffers - p.inRegistered)
        << "rank " << rank << ": fewer registrations than unregistered message buffers";
    // Registered: every message buffer lies in a pin (the two buffers, or the scratch memory), and the
    // registrations are those pins alone.
    EXPECT_GE(r.buffers, 40) << "rank " << rank;
    EXPECT_EQ(r.inRegistered, r.buffers) << "rank " << rank;
    EXPECT_LE(r.registrations, 6) << "rank " << rank << ": " << r.registrations << " registrations for " << r.buffers
                                  << " message buffers";
  }
}

}  // namespace
}  // namespace myriad::test
