// Groups of sends and receives in patterns that deadlock without group semantics: a ring of blocking sends
// and receives (1 MiB messages, more than a transport buffers), an all-pairs exchange including self,
// several messages to one peer matched in call order, a collective mixed with point-to-point calls, nested
// groups, and groups on a host stream. Every message's bytes name its sender, receiver and sequence number.
#include <gtest/gtest.h>

#include <chrono>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "myriad/myriad.h"
#include "tests/common/fork_ranks.h"
#include "tests/common/mp_helpers.h"
#include "tests/common/reference.h"

namespace myriad::test {
namespace {

using namespace std::chrono_literals;
using Bytes = std::vector<unsigned char>;

struct Msg {
  bool send;
  int peer;
  size_t count;  // float32 elements
  int seq;       // k-th message between this pair
};

// Where in the sender's pattern the k-th message from `from` to `to` starts.
size_t patternOffset(int to, int seq) {
  return (static_cast<size_t>(to) * 16 + static_cast<size_t>(seq)) << 24;
}

// Posts msgs inside one group (calls issued in list order, after `extra` when set), then checks every
// received buffer. Blocking calls when stream is NULL.
std::string runGroup(myrComm_t comm, int rank, const std::vector<Msg>& msgs, myrStream_t stream, uint64_t salt,
                     const std::function<std::string()>& extra = nullptr, bool nested = false) {
  std::vector<Bytes> bufs(msgs.size());
  for (size_t i = 0; i < msgs.size(); ++i) {
    bufs[i].assign(msgs[i].count * sizeof(float), 0xA5);
    if (msgs[i].send) fillPattern(bufs[i].data(), bufs[i].size(), rank, patternOffset(msgs[i].peer, msgs[i].seq), salt);
  }
  const std::string where = "rank " + std::to_string(rank) + " salt " + std::to_string(salt) + ": ";
  myrResult_t res = myrGroupStart();
  if (res != myrSuccess) return where + resultText("myrGroupStart", res, nullptr);
  if (nested) (void)myrGroupStart();
  std::string err = extra ? extra() : "";
  for (size_t i = 0; i < msgs.size() && err.empty(); ++i) {
    if (nested && i == msgs.size() / 2) (void)myrGroupEnd();  // inner group ends halfway: nothing runs yet
    const Msg& m = msgs[i];
    res = m.send ? myrSend(bufs[i].data(), m.count, myrFloat32, m.peer, comm, stream)
                 : myrRecv(bufs[i].data(), m.count, myrFloat32, m.peer, comm, stream);
    if (res != myrSuccess) err = where + resultText(m.send ? "myrSend" : "myrRecv", res, comm);
  }
  if (nested && msgs.size() < 2) (void)myrGroupEnd();
  res = myrGroupEnd();
  if (!err.empty()) return err;
  if (res != myrSuccess)
    return where + resultText("myrGroupEnd", res, nullptr) + ": " + myrGetLastError(nullptr) +
           " (on the communicator: " + myrGetLastError(comm) + ")";
  err = syncStream(stream, comm);
  if (!err.empty()) return where + err;
  for (size_t i = 0; i < msgs.size(); ++i) {
    const Msg& m = msgs[i];
    Bytes want(bufs[i].size());
    fillPattern(want.data(), want.size(), m.send ? rank : m.peer, patternOffset(m.send ? m.peer : rank, m.seq), salt);
    if (bufs[i] == want) continue;
    size_t at = 0;
    while (bufs[i][at] == want[at]) ++at;
    return where + (m.send ? "the send buffer to rank " : "message ") + std::to_string(m.seq) + " from rank " +
           std::to_string(m.peer) + " (" + std::to_string(m.count) + " floats) differs at byte " + std::to_string(at);
  }
  return "";
}

std::vector<Msg> ring(int rank, int n, size_t count, bool recvFirst) {
  const Msg send{true, (rank + 1) % n, count, 0}, recv{false, (rank + n - 1) % n, count, 0};
  return recvFirst ? std::vector<Msg>{recv, send} : std::vector<Msg>{send, recv};
}

// Every rank sends to every rank (itself included) and receives from every rank; sizes differ per pair.
std::vector<Msg> allPairs(int rank, int n, uint64_t salt) {
  auto countOf = [&](int from, int to) { return static_cast<size_t>((from * 7 + to * 3 + salt) % 5) * 613; };
  std::vector<Msg> msgs;
  for (int p = 0; p < n; ++p) msgs.push_back({true, p, countOf(rank, p), 0});
  for (int p = n - 1; p >= 0; --p) msgs.push_back({false, p, countOf(p, rank), 0});
  return msgs;
}

// Four messages to the next rank, two of them the same size: only call order can match them.
std::vector<Msg> toOnePeer(int rank, int n) {
  const size_t counts[] = {4099, 1, 4099, size_t{1} << 17};
  std::vector<Msg> msgs;
  for (int k = 0; k < 4; ++k) msgs.push_back({true, (rank + 1) % n, counts[k], k});
  for (int k = 0; k < 4; ++k) msgs.push_back({false, (rank + n - 1) % n, counts[k], k});
  return msgs;
}

class GroupMp : public testing::TestWithParam<MpParam> {
 protected:
  // Runs fn(comm, rank, stream) in every rank of a fresh communicator.
  void runRanks(const std::function<std::string(myrComm_t, int, myrStream_t, uint64_t)>& fn) {
    const MpParam p = GetParam();
    const uint64_t seed = testSeed();
    auto body = [&](int rank, const myrUniqueId& id) -> int {
      useTransport(p.transport);
      return runInChild(p.nranks, rank, id, p.hostStream,
                        [&](myrComm_t comm, myrStream_t stream) { return fn(comm, rank, stream, seed); });
    };
    const ForkOutcome out = forkRanks(p.nranks, body, 60s, seed);
    ASSERT_TRUE(out.allSucceeded()) << out.describeFailures();
  }
  int n() const { return GetParam().nranks; }
};

TEST_P(GroupMp, RingOfSendsAndReceives) {
  runRanks([&](myrComm_t comm, int rank, myrStream_t stream, uint64_t seed) -> std::string {
    for (size_t count : {size_t{1}, size_t{1009}, size_t{1} << 18}) {
      for (bool recvFirst : {false, true}) {
        std::string err = runGroup(comm, rank, ring(rank, n(), count, recvFirst), stream, seed + count);
        if (!err.empty()) return "ring of " + std::to_string(count) + (recvFirst ? " recv first: " : ": ") + err;
      }
    }
    return "";
  });
}

TEST_P(GroupMp, AllPairsIncludingSelf) {
  runRanks([&](myrComm_t comm, int rank, myrStream_t stream, uint64_t seed) -> std::string {
    for (uint64_t k = 0; k < 3; ++k) {
      std::string err = runGroup(comm, rank, allPairs(rank, n(), seed + k), stream, seed + k);
      if (!err.empty()) return "all pairs: " + err;
    }
    return "";
  });
}

TEST_P(GroupMp, MessagesToOnePeerKeepCallOrder) {
  runRanks([&](myrComm_t comm, int rank, myrStream_t stream, uint64_t seed) -> std::string {
    std::string err = runGroup(comm, rank, toOnePeer(rank, n()), stream, seed);
    return err.empty() ? "" : "same peer: " + err;
  });
}

TEST_P(GroupMp, CollectiveMixedWithPointToPoint) {
  runRanks([&](myrComm_t comm, int rank, myrStream_t stream, uint64_t seed) -> std::string {
    // The collective is issued before the point-to-point calls (group order); its result is checked after.
    const size_t count = 1009;
    std::vector<float> send(count), recv(count * static_cast<size_t>(n()), -1.0f);
    fillPattern(send.data(), count * sizeof(float), rank, 0, seed);
    auto gather = [&]() -> std::string {
      const myrResult_t res = myrAllGather(send.data(), recv.data(), count, myrFloat32, comm, stream);
      return res == myrSuccess ? "" : resultText("myrAllGather in a group", res, comm);
    };
    std::string err = runGroup(comm, rank, ring(rank, n(), size_t{1} << 16, false), stream, seed, gather);
    if (!err.empty()) return "mixed group: " + err;
    Bytes want(count * sizeof(float));
    for (int r = 0; r < n(); ++r) {
      fillPattern(want.data(), want.size(), r, 0, seed);
      if (std::memcmp(want.data(), recv.data() + static_cast<size_t>(r) * count, want.size()) != 0)
        return "mixed group: the all-gather's block " + std::to_string(r) + " is wrong";
    }
    return "";
  });
}

TEST_P(GroupMp, NestedGroupsIssueAtTheOutermostEnd) {
  runRanks([&](myrComm_t comm, int rank, myrStream_t stream, uint64_t seed) -> std::string {
    std::string err = runGroup(comm, rank, allPairs(rank, n(), seed), stream, seed, nullptr, true);
    return err.empty() ? "" : "nested: " + err;
  });
}

// Blocking groups on 2, 3 and 5 ranks; host-stream groups on 3 ranks.
INSTANTIATE_TEST_SUITE_P(Mp, GroupMp,
                         testing::Values(MpParam{Transport::kShm, 2, false}, MpParam{Transport::kShm, 3, false},
                                         MpParam{Transport::kShm, 5, false}, MpParam{Transport::kTcp, 2, false},
                                         MpParam{Transport::kTcp, 3, false}, MpParam{Transport::kTcp, 5, false},
                                         MpParam{Transport::kShm, 3, true}, MpParam{Transport::kTcp, 3, true},
                                         MpParam{Transport::kShm, 5, true}),
                         [](const testing::TestParamInfo<MpParam>& info) { return mpParamName(info.param); });

}  // namespace
}  // namespace myriad::test
