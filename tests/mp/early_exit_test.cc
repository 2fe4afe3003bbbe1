// A rank whose calls have completed may destroy its communicator and exit at once: what it sent must still
// reach peers that are slower to receive. The sender finishes a blocking send (or a broadcast as root) and
// leaves; the receivers enter their call 300 ms later and must get the data, not an error about the
// departed rank. The sender may also abort instead (no drain then): a receiver that had not attached to its
// shared-memory FIFO yet must still find it. And ranks that destroy together must not wait on each other in
// a circle: each sends a small message to the next one round a ring and destroys at once (its drain then
// waits on the next rank's acknowledgement while that rank drains towards its own next).
#include <gtest/gtest.h>

#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include "myriad/myriad.h"
#include "tests/common/fork_ranks.h"
#include "tests/common/mp_helpers.h"
#include "tests/common/reference.h"

namespace myriad::test {
namespace {

using namespace std::chrono_literals;

struct ExitParam {
  Transport transport;
  bool broadcast;  // false: one send from rank 0 to rank 1
  size_t bytes;
  bool abortSender = false;  // myrCommAbort instead of myrCommDestroy
};

void PrintTo(const ExitParam& p, std::ostream* os) {
  *os << transportName(p.transport) << (p.broadcast ? " broadcast " : " send ") << p.bytes << " B"
      << (p.abortSender ? ", sender aborts" : "");
}

class EarlyExit : public testing::TestWithParam<ExitParam> {};

TEST_P(EarlyExit, DataOutlivesTheSender) {
  const ExitParam p = GetParam();
  const uint64_t seed = testSeed();
  const int nranks = p.broadcast ? 3 : 2;
  auto body = [&](int rank, const myrUniqueId& id) -> int {
    useTransport(p.transport);
    myrComm_t comm = nullptr;
    std::string err = initComm(&comm, nranks, id, rank);
    MYR_CHILD_CHECK(err.empty(), err);
    std::vector<unsigned char> buf(p.bytes, 0);
    if (rank == 0) fillPattern(buf.data(), buf.size(), 0, 0, seed);
    if (rank != 0) std::this_thread::sleep_for(300ms);
    const myrResult_t res = p.broadcast ? myrBroadcast(buf.data(), buf.data(), p.bytes, myrUint8, 0, comm, nullptr)
                            : rank == 0 ? myrSend(buf.data(), p.bytes, myrUint8, 1, comm, nullptr)
                                        : myrRecv(buf.data(), p.bytes, myrUint8, 0, comm, nullptr);
    MYR_CHILD_CHECK(res == myrSuccess,
                    resultText(rank == 0 ? "the sender's call" : "the late receiver's call", res, comm));
    for (size_t i = 0; i < buf.size(); ++i) {
      MYR_CHILD_CHECK(buf[i] == patternByte(0, i, seed), "byte " + std::to_string(i) + " is wrong");
    }
    if (rank == 0 && p.abortSender) {
      const myrResult_t a = myrCommAbort(comm);
      MYR_CHILD_CHECK(a == myrSuccess, resultText("myrCommAbort", a, nullptr));
      std::this_thread::sleep_for(1s);  // alive, as a rank that aborted one communicator and goes on
      return 0;
    }
    err = finishComm(comm, nullptr);
    MYR_CHILD_CHECK(err.empty(), err);
    return 0;
  };
  const ForkOutcome out = forkRanks(nranks, body, 30s, seed);
  ASSERT_TRUE(out.allSucceeded()) << out.describeFailures();
}

INSTANTIATE_TEST_SUITE_P(Mp, EarlyExit,
                         testing::Values(ExitParam{Transport::kShm, false, 4096},
                                         ExitParam{Transport::kTcp, false, 4096},
                                         ExitParam{Transport::kShm, true, 4096}, ExitParam{Transport::kTcp, true, 4096},
                                         ExitParam{Transport::kShm, false, 4096, true},
                                         ExitParam{Transport::kShm, true, 4096, true}),
                         [](const testing::TestParamInfo<ExitParam>& info) {
                           return std::string(transportName(info.param.transport)) +
                                  (info.param.broadcast ? "_broadcast" : "_send") +
                                  (info.param.abortSender ? "_abort" : "");
                         });

// Every rank's first connection is towards the next one round the ring, whose small-message acknowledgement
// it waits for while destroying; a destroy that drained one connection at a time held them all until
// MYRIAD_TIMEOUT_MS (set far beyond the fork deadline here). Ten communicators in a row, 3 and 5 ranks, tcp.
class RingDestroy : public testing::TestWithParam<int> {};

TEST_P(RingDestroy, NoCircularWaitAtDestroy) {
  const int nranks = GetParam();
  const uint64_t seed = testSeed();
  auto body = [&](int rank, const myrUniqueId& id) -> int {
    useTransport(Transport::kTcp);
    setenv("MYRIAD_TIMEOUT_MS", "600000", 1);
    myrComm_t comm = nullptr;
    std::string err = initComm(&comm, nranks, id, rank);
    MYR_CHILD_CHECK(err.empty(), err);
    const int next = (rank + 1) % nranks, prev = (rank + nranks - 1) % nranks;
    std::vector<unsigned char> out(64), in(64, 0);
    fillPattern(out.data(), out.size(), rank, 0, seed);
    myrResult_t res = myrGroupStart();
    if (res == myrSuccess) res = myrSend(out.data(), out.size(), myrUint8, next, comm, nullptr);
    if (res == myrSuccess) res = myrRecv(in.data(), in.size(), myrUint8, prev, comm, nullptr);
    const myrResult_t end = myrGroupEnd();
    MYR_CHILD_CHECK(res == myrSuccess && end == myrSuccess,
                    resultText("the ring's send and receive", res != myrSuccess ? res : end, comm));
    for (size_t i = 0; i < in.size(); ++i)
      MYR_CHILD_CHECK(in[i] == patternByte(prev, i, seed), "byte " + std::to_string(i) + " from the ring is wrong");
    err = finishComm(comm, nullptr);
    MYR_CHILD_CHECK(err.empty(), err);
    return 0;
  };
  for (int round = 0; round < 10; ++round) {
    const ForkOutcome out = forkRanks(nranks, body, 30s, seed + static_cast<uint64_t>(round));
    ASSERT_TRUE(out.allSucceeded()) << "communicator " << round << ": " << out.describeFailures();
  }
}

INSTANTIATE_TEST_SUITE_P(Mp, RingDestroy, testing::Values(3, 5),
                         [](const testing::TestParamInfo<int>& info) { return "n" + std::to_string(info.param); });

}  // namespace
}  // namespace myriad::test
