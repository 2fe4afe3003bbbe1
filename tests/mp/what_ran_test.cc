// Which path and which algorithm really ran, as myrDebugPeers reports it: shm in cma mode really reads the
// sender's memory with process_vm_readv (not a silent fall-back to the FIFO), fifo mode never does, tcp is a
// socket between the two ranks' addresses, and MYRIAD_ALGO runs the algorithm it names (the flight record's
// last call). Each case runs a checked all-reduce first, so the text describes traffic that was verified.
#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

#include "myriad/myriad.h"
#include "tests/common/fork_ranks.h"
#include "tests/common/mp_helpers.h"

namespace myriad::test {
namespace {

using namespace std::chrono_literals;

// The decimal number right after `before` in `line`, or -1. (No std::regex: GCC 12 warns inside it under
// the sanitizer builds' -O1, and the warnings are errors.)
long long numberAfter(const std::string& line, const std::string& before) {
  const size_t at = line.find(before);
  if (at == std::string::npos) return -1;
  size_t i = at + before.size();
  if (i >= line.size() || !std::isdigit(static_cast<unsigned char>(line[i]))) return -1;
  long long v = 0;
  for (; i < line.size() && std::isdigit(static_cast<unsigned char>(line[i])); ++i) v = v * 10 + (line[i] - '0');
  return v;
}

// The decimal number that ends right before `after` in `line`, or -1.
long long numberBefore(const std::string& line, const std::string& after) {
  size_t end = line.find(after);
  if (end == std::string::npos) return -1;
  size_t begin = end;
  while (begin > 0 && std::isdigit(static_cast<unsigned char>(line[begin - 1]))) --begin;
  if (begin == end) return -1;
  return std::stoll(line.substr(begin, end - begin));
}

// Two ranks, one checked all-reduce of `count` floats, then `check` on this rank's myrDebugPeers text
// ("" when it holds). `env` runs first in the child (transport, algorithm).
void runAndDescribe(size_t count, const std::function<void()>& env,
                    const std::function<std::string(int rank, const std::string& text)>& check) {
  const ForkOutcome out = forkRanks(
      2,
      [&](int rank, const myrUniqueId& id) {
        env();
        return runInChild(2, rank, id, false, [&](myrComm_t comm, myrStream_t stream) {
          const std::string err = runAllReduceCase(comm, rank, 2, {myrFloat32, myrSum, count, false}, stream, 11);
          if (!err.empty()) return err;
          const std::string text = debugPeers(comm);
          const std::string why = check(rank, text);
          return why.empty() ? why : why + "; myrDebugPeers said:\n" + text;
        });
      },
      60s);
  EXPECT_TRUE(out.allSucceeded()) << out.setupError << out.describeFailures();
}

TEST(WhatRan, ShmCmaReadsTheSendersMemory) {
  runAndDescribe(
      1 << 20, [] { useTransport(Transport::kShmCma); },
      [](int rank, const std::string& text) -> std::string {
        const std::string line = peerLine(text, 1 - rank);
        if (line.rfind("shm: ", 0) != 0) return "the peer is not reached over shm";
        const long long reads = numberBefore(line, " single-copy reads");
        const long long bytes = numberAfter(line, "through the FIFO and ");
        if (reads <= 0 || bytes < (1 << 20)) return "no single-copy read of a 4 MiB all-reduce in cma mode";
        return "";
      });
}

TEST(WhatRan, ShmFifoNeverReadsTheSendersMemory) {
  runAndDescribe(
      1 << 20, [] { useTransport(Transport::kShm); },
      [](int rank, const std::string& text) -> std::string {
        const std::string line = peerLine(text, 1 - rank);
        if (line.rfind("shm: ", 0) != 0) return "the peer is not reached over shm";
        if (numberBefore(line, " single-copy reads") != 0) return "single-copy reads in fifo mode";
        if (numberAfter(line, "received ") < (1 << 20)) return "the FIFO carried too little";
        return "";
      });
}

TEST(WhatRan, TcpIsASocketBetweenTheRanks) {
  runAndDescribe(
      4096,
      [] {
        useTransport(Transport::kTcp);
        setenv("MYRIAD_NET_PATHS", "1", 1);
      },
      [](int rank, const std::string& text) -> std::string {
        const std::string line = peerLine(text, 1 - rank);
        const size_t arrow = line.find(" -> ");
        if (line.rfind("tcp: ", 0) != 0 || arrow == std::string::npos || line.find('?') != std::string::npos ||
            numberBefore(line, " -> ") <= 0 || line.rfind(':') < arrow)
          return "not one tcp socket with both ends named";
        return "";
      });
}

TEST(WhatRan, TcpMultipathNamesItsPaths) {
  runAndDescribe(
      1 << 20,
      [] {
        useTransport(Transport::kTcp);
        setenv("MYRIAD_NET_PATHS", "4", 1);
      },
      [](int rank, const std::string& text) -> std::string {
        const std::string line = peerLine(text, 1 - rank);
        if (line.rfind("tcp multipath to ", 0) != 0) return "not a multipath connection";
        if (numberBefore(line, " paths, bytes") < 2) return "fewer than 2 paths";
        return "";
      });
}

// Small messages keep to one lane of the path set while its acknowledgements keep up, as a plain connection
// would: after 300 checked 4 KiB all-reduces over 4 paths, one source port carries at least three quarters of the
// bytes acknowledged (spread by unacknowledged bytes, as before stop 36, the busiest took 26-31%). A short
// pause before the last calls lets their polls send the batch acks that came due.
TEST(WhatRan, TcpMultipathSmallMessagesKeepToOneLane) {
  const ForkOutcome out = forkRanks(
      2,
      [&](int rank, const myrUniqueId& id) {
        useTransport(Transport::kTcp);
        setenv("MYRIAD_NET_PATHS", "4", 1);
        return runInChild(2, rank, id, false, [&](myrComm_t comm, myrStream_t stream) -> std::string {
          for (int i = 0; i < 300; ++i) {
            if (i == 290) std::this_thread::sleep_for(5ms);
            const std::string err = runAllReduceCase(comm, rank, 2, {myrFloat32, myrSum, 1024, false}, stream, i);
            if (!err.empty()) return err;
          }
          const std::string text = debugPeers(comm);
          const std::string line = peerLine(text, 1 - rank);
          const size_t list = line.find("source port:");
          if (line.rfind("tcp multipath to ", 0) != 0 || list == std::string::npos)
            return "not a multipath connection; myrDebugPeers said:\n" + text;
          long long total = 0, most = 0;
          int ports = 0;
          for (size_t at = line.find('=', list); at != std::string::npos; at = line.find('=', at + 1)) {
            const long long bytes = numberAfter(line.substr(at), "=");
            if (bytes < 0) return "unreadable port list; myrDebugPeers said:\n" + text;
            total += bytes;
            most = std::max(most, bytes);
            ++ports;
          }
          if (ports < 2 || total <= 0) return "no bytes acknowledged over several ports; myrDebugPeers said:\n" + text;
          if (most * 4 < total * 3)
            return "the busiest port carried " + std::to_string(most) + " of " + std::to_string(total) +
                   " bytes acknowledged; myrDebugPeers said:\n" + text;
          return "";
        });
      },
      60s);
  EXPECT_TRUE(out.allSucceeded()) << out.setupError << out.describeFailures();
}

// Two algorithms forced in turn: the record names each, so the name is not a constant of the query.
TEST(WhatRan, ForcedAlgorithmIsTheOneThatRan) {
  for (const char* algo : {"allreduce.ring", "allreduce.tree"}) {
    SCOPED_TRACE(algo);
    runAndDescribe(
        1009, [algo] { forceAlgorithms(algo); },
        [algo](int, const std::string& text) -> std::string {
          if (text.find(std::string("last call: allreduce via ") + algo + "\n") == std::string::npos)
            return std::string("the last call did not run ") + algo;
          return "";
        });
  }
}

// Connections open lazily, to the peers a plan uses: after a ring all-reduce on 6 ranks each rank is
// connected to its two ring neighbours and to nobody else; an all-to-all then connects it to every peer.
TEST(WhatRan, ConnectionsOpenOnlyToThePeersAPlanUses) {
  constexpr int n = 6;
  const ForkOutcome out = forkRanks(
      n,
      [&](int rank, const myrUniqueId& id) {
        useTransport(Transport::kTcp);
        setenv("MYRIAD_NET_PATHS", "1", 1);
        forceAlgorithms("allreduce.ring,alltoall.pairwise");
        return runInChild(n, rank, id, false, [&](myrComm_t comm, myrStream_t stream) -> std::string {
          const std::string err = runAllReduceCase(comm, rank, n, {myrFloat32, myrSum, 4096, false}, stream, 5);
          if (!err.empty()) return err;
          std::string text = debugPeers(comm);
          for (int peer = 0; peer < n; ++peer) {
            if (peer == rank) continue;
            const bool neighbour = peer == (rank + 1) % n || peer == (rank + n - 1) % n;
            const bool open = peerLine(text, peer).rfind("tcp: ", 0) == 0;
            if (open != neighbour)
              return "after a ring all-reduce, peer " + std::to_string(peer) + (open ? " is" : " is not") +
                     " connected; myrDebugPeers said:\n" + text;
          }
          std::vector<float> send(n * 64, 1.0f), recv(n * 64, 0.0f);
          myrResult_t res = myrAllToAll(send.data(), recv.data(), 64, myrFloat32, comm, stream);
          if (res != myrSuccess) return resultText("myrAllToAll", res, comm);
          text = debugPeers(comm);
          for (int peer = 0; peer < n; ++peer)
            if (peer != rank && peerLine(text, peer).rfind("tcp: ", 0) != 0)
              return "after an all-to-all, peer " + std::to_string(peer) + " is not connected; myrDebugPeers said:\n" +
                     text;
          return "";
        });
      },
      60s);
  EXPECT_TRUE(out.allSucceeded()) << out.setupError << out.describeFailures();
}

#ifdef MYRIAD_TEST_TUNER_PLUGIN_DIR
// MYRIAD_TUNER_PLUGIN: the test plugin (tests/unit/tuner_test_plugin.c) picks allreduce.tree, which the
// model would not choose for a small all-reduce on two ranks, and that is what runs.
TEST(WhatRan, TunerPluginChoiceIsTheOneThatRan) {
  runAndDescribe(
      1009,
      [] {
        forceAlgorithms("");
        setenv("MYRIAD_TUNER_PLUGIN", MYRIAD_TEST_TUNER_PLUGIN_DIR "/libmyriad_test_tuner_plugin.so", 1);
      },
      [](int, const std::string& text) -> std::string {
        if (text.find("last call: allreduce via allreduce.tree\n") == std::string::npos)
          return "the last call did not run the plugin's allreduce.tree";
        return "";
      });
}
#endif

// A malformed MYRIAD_TUNER_FILE fails the call, naming the file and the line, on every rank alike.
TEST(WhatRan, BadTunerFileFailsTheCallNamingFileAndLine) {
  const std::string path = testing::TempDir() + "myriad_bad_tuner_file.txt";
  {
    FILE* f = std::fopen(path.c_str(), "w");
    ASSERT_NE(f, nullptr);
    std::fputs("shm.gbps 2\nshm.speed 3\n", f);
    std::fclose(f);
  }
  const ForkOutcome out = forkRanks(
      2,
      [&](int rank, const myrUniqueId& id) {
        forceAlgorithms("");
        setenv("MYRIAD_TUNER_FILE", path.c_str(), 1);
        return runInChild(2, rank, id, false, [&](myrComm_t comm, myrStream_t stream) -> std::string {
          std::vector<float> buf(16, 1.0f);
          myrResult_t res = myrAllReduce(buf.data(), buf.data(), buf.size(), myrFloat32, myrSum, comm, stream);
          const std::string text = resultText("myrAllReduce", res, comm);
          if (res != myrInvalidArgument) return "expected myrInvalidArgument: " + text;
          if (text.find(path + ":2: unknown key 'shm.speed'") == std::string::npos) return "unclear error: " + text;
          return "";
        });
      },
      60s);
  EXPECT_TRUE(out.allSucceeded()) << out.setupError << out.describeFailures();
  std::remove(path.c_str());
}

}  // namespace
}  // namespace myriad::test
