// "Hostile bytes on the bootstrap port", live: while 4 ranks form a communicator through MYRIAD_COMM_ID
// (rank 0 hosts the rendezvous store in its own process), two more processes flood the store's port with
// connections that send random bytes, half a hello, a version-1 hello, a hello's header and nothing more,
// or that stay open and silent, or reset. The communicator must still form and all-reduce correctly; the
// flood must have reached the port (counted by the flooders) throughout the ranks' init.
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <deque>
#include <random>
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

constexpr int kRanks = 4;
constexpr int kFlooders = 2;
constexpr auto kFloodFor = 5s;
constexpr auto kRanksStartAfter = 500ms;  // the flood is on before the first rank reaches the port
constexpr size_t kHeldOpen = 64;          // silent connections a flooder keeps (the server drops them at 10 s)
constexpr int kMinReached = 100;          // connections each flooder must have made
// Between connections: at most ~2,500 a second per flooder, so that the closed ones (TIME_WAIT) leave the
// loopback's ephemeral ports to the ranks' own connections.
constexpr auto kPace = 400us;

int connectLoopback(int port) {
  const int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return -1;
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(static_cast<uint16_t>(port));
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof(a)) != 0) {
    close(fd);
    return -1;
  }
  return fd;
}

void sendBytes(int fd, const std::vector<uint8_t>& b) {
  if (!b.empty()) (void)send(fd, b.data(), b.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
}

std::vector<uint8_t> word(uint32_t w) {
  return {static_cast<uint8_t>(w), static_cast<uint8_t>(w >> 8), static_cast<uint8_t>(w >> 16),
          static_cast<uint8_t>(w >> 24)};
}

// One flooder: connections of every hostile kind until kFloodFor has passed. Returns how many connected.
int flood(int port, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::deque<int> held;
  int reached = 0;
  const auto until = Clock::now() + kFloodFor;
  while (Clock::now() < until) {
    const int fd = connectLoopback(port);
    if (fd < 0) {  // rank 0 has not started the root yet
      std::this_thread::sleep_for(2ms);
      continue;
    }
    ++reached;
    std::vector<uint8_t> bytes;
    const int kind = static_cast<int>(rng() % 6);
    switch (kind) {
      case 0:  // random bytes
        bytes.resize(1 + rng() % 4096);
        for (auto& b : bytes) b = static_cast<uint8_t>(rng());
        break;
      case 1:  // a hello's header ("MYRH", version 2) and part of an Open
        bytes = word(0x4852594d);
        for (uint8_t b : word(2)) bytes.push_back(b);
        bytes.resize(8 + rng() % 28, 0x5a);
        break;
      case 2: bytes = word(0x5352594d); break;             // a version-1 store hello
      case 3: bytes = {1, 0xff, 0xff, 0xff, 0x7f}; break;  // a request with no hello: a set of a 2 GiB key
      default: break;                                      // 4: silent, held open; 5: reset at once
    }
    sendBytes(fd, bytes);
    if (kind == 4) {
      held.push_back(fd);
      if (held.size() > kHeldOpen) {
        close(held.front());
        held.pop_front();
      }
      continue;
    }
    if (kind == 5) {
      linger l{1, 0};
      setsockopt(fd, SOL_SOCKET, SO_LINGER, &l, sizeof(l));
    }
    close(fd);
    std::this_thread::sleep_for(kPace);
  }
  for (int fd : held) close(fd);
  return reached;
}

TEST(StoreFlood, CommunicatorFormsWhileItsStorePortIsFlooded) {
  int port = 0;
  ASSERT_EQ(loopbackSocket(false, &port), 0) << "cannot find a free loopback port";
  const uint64_t seed = testSeed();
  auto body = [&](int child, const myrUniqueId&) -> int {
    if (child >= kRanks) {
      const int reached = flood(port, seed + static_cast<uint64_t>(child));
      childReport("flooder made " + std::to_string(reached) + " connections");
      MYR_CHILD_CHECK(reached >= kMinReached, "the flood reached the store only " + std::to_string(reached) + " times");
      return 0;
    }
    std::this_thread::sleep_for(kRanksStartAfter);
    setenv("MYRIAD_DEBUG", "NONE", 1);  // rank 0's store logs every dropped connection
    useTransport(Transport::kTcp);
    myrComm_t comm = nullptr;
    std::string err = joinByCommId(commIdFor(port), kRanks, child, &comm);
    MYR_CHILD_CHECK(err.empty(), err);
    const AllReduceCase c{myrFloat32, myrSum, 4099, false};
    err = runAllReduceCase(comm, child, kRanks, c, nullptr, seed);
    MYR_CHILD_CHECK(err.empty(), err);
    // Rank 0 hosts the store: it stays until the flood is over, so that the flood meets a live server.
    if (child == 0) std::this_thread::sleep_for(kFloodFor);
    const myrResult_t res = myrCommDestroy(comm);
    MYR_CHILD_CHECK(res == myrSuccess, resultText("myrCommDestroy", res, nullptr));
    return 0;
  };
  const ForkOutcome out = forkRanksWithoutId(kRanks + kFlooders, body, 90s, seed);
  ASSERT_TRUE(out.allSucceeded()) << "(children " << kRanks << " and up flood the store)\n" << out.describeFailures();
  for (int f = kRanks; f < kRanks + kFlooders; ++f)
    std::printf("%s\n", out.ranks[static_cast<size_t>(f)].report.c_str());
}

}  // namespace
}  // namespace myriad::test
