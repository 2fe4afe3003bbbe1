// Re-pathing on Soft-RoCE (inside the VM, after vm-suite's `repath` check delayed one UDP source port with
// netem on veth1): rank 0 (rxe1) sends a stream of messages to rank 1 over 2 active QPs with the ports
// pinned (MYRIAD_NET_PORTS); the QP of the delayed port must end retired for a spare, which carried data,
// and every byte must arrive intact. Without RDMA_DELAYED_PORT (no delay set up) the test skips.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <sstream>
#include <string>
#include <vector>

#include "myriad/myriad.h"
#include "tests/common/fork_ranks.h"
#include "tests/common/mp_helpers.h"
#include "tests/rdma/rdma_env.h"

namespace myriad::test {
namespace {

using namespace std::chrono_literals;

constexpr const char* kPorts = "50001,50002,50003,50004";  // slots 0, 1 active; 2, 3 spares

uint8_t pattern(size_t i, int round) {
  return static_cast<uint8_t>((i * 2654435761u + static_cast<size_t>(round) * 977) >> 9);
}

struct PathLine {
  int slot = -1;
  unsigned port = 0;
  std::string state;
  double mb = 0;
};

// The per-path lines of myrDebugNetPaths' table.
std::vector<PathLine> pathLines(const std::string& table) {
  std::vector<PathLine> out;
  std::istringstream in(table);
  std::string line;
  while (std::getline(in, line)) {
    PathLine p;
    int pos = 0;
    char state[32] = {0};
    if (std::sscanf(line.c_str(), "# %d %d %u %31s %lf", &p.slot, &pos, &p.port, state, &p.mb) == 5) {
      p.state = state;
      out.push_back(p);
    }
  }
  return out;
}

TEST(RdmaRepath, DelayedPortIsLeftForASpare) {
  const char* delayed = std::getenv("RDMA_DELAYED_PORT");
  if (!rxeReady() || !delayed)
    GTEST_SKIP() << "needs rxe1/rxe2 and one source port delayed by netem (vm-suite's repath check)";
  const unsigned port = static_cast<unsigned>(std::atoi(delayed));
  const size_t bytes = size_t{2} << 20;
  const int rounds = 8;
  auto body = [&](int rank, const myrUniqueId& id) -> int {
    useRdma(rank, 2);
    setenv("MYRIAD_NET_PORTS", kPorts, 1);
    setenv("MYRIAD_NET_SEED", "1", 1);
    setenv("MYRIAD_NET_CHUNK_BYTES", "32768", 1);
    setenv("MYRIAD_NET_INFLIGHT_BYTES", "131072", 1);  // 64 KiB per QP: the delay dominates its latency
    setenv("MYRIAD_TIMEOUT_MS", "60000", 1);
    return runInChild(2, rank, id, false, [&](myrComm_t comm, myrStream_t) -> std::string {
      std::vector<uint8_t> buf(bytes);
      for (int round = 0; round < rounds; ++round) {
        if (rank == 0) {
          for (size_t i = 0; i < bytes; ++i) buf[i] = pattern(i, round);
          myrResult_t r = myrSend(buf.data(), bytes, myrUint8, 1, comm, nullptr);
          if (r != myrSuccess) return resultText("myrSend", r, comm);
          continue;
        }
        std::fill(buf.begin(), buf.end(), 0xEE);
        myrResult_t r = myrRecv(buf.data(), bytes, myrUint8, 0, comm, nullptr);
        if (r != myrSuccess) return resultText("myrRecv", r, comm);
        for (size_t i = 0; i < bytes; ++i)
          if (buf[i] != pattern(i, round))
            return "round " + std::to_string(round) + ": byte " + std::to_string(i) + " is wrong";
      }
      if (rank != 0) return "";
      size_t len = 0;
      if (myrDebugNetPaths(comm, nullptr, &len) != myrSuccess) return "myrDebugNetPaths failed";
      std::string table(len, '\0');
      if (myrDebugNetPaths(comm, table.data(), &len) != myrSuccess) return "myrDebugNetPaths failed";
      std::istringstream lines(table);
      for (std::string l; std::getline(lines, l);) std::printf("note: %s\n", l.c_str());
      std::fflush(stdout);
      bool delayedActive = false, spareCarried = false;
      for (const PathLine& p : pathLines(table)) {
        if (p.port == port && p.state == "active") delayedActive = true;
        if (p.slot >= 2 && p.mb > 0) spareCarried = true;
      }
      if (delayedActive) return "the QP of delayed port " + std::to_string(port) + " is still active:\n" + table;
      if (!spareCarried) return "no spare QP carried data:\n" + table;
      return "";
    });
  };
  const ForkOutcome out = forkRanks(2, body, 240s, testSeed());
  ASSERT_TRUE(out.allSucceeded()) << out.describeFailures();
}

}  // namespace
}  // namespace myriad::test
