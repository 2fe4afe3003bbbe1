// The rendezvous host dies after init (issue 18): a process that is not a rank holds the store; once the
// three ranks are up, rank 0 SIGKILLs it. Collectives go on, correct and without error (failures travel over
// the liveness channel, not the store), and only what needs the store — a split — fails, at once, with an
// error that says the store is gone.
#include <gtest/gtest.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstring>
#include <new>
#include <string>
#include <thread>
#include <vector>

#include "myriad/myriad.h"
#include "tests/common/fork_ranks.h"
#include "tests/common/mp_helpers.h"

namespace myriad::test {
namespace {

using namespace std::chrono_literals;

struct Holder {  // a MAP_SHARED page: the holder's id and pid
  std::atomic<int> ready{0};
  myrUniqueId id;
  std::atomic<int> pid{0};
};

TEST(StoreHost, KilledAfterInitCollectivesGoOnUntilOneNeedsTheStore) {
  void* page = mmap(nullptr, sizeof(Holder), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  ASSERT_NE(page, MAP_FAILED);
  auto* h = new (page) Holder();
  const pid_t holder = fork();
  ASSERT_GE(holder, 0);
  if (holder == 0) {
    if (myrGetUniqueId(&h->id) != myrSuccess) _exit(1);
    h->pid.store(getpid());
    h->ready.store(1);
    for (;;) pause();
  }
  for (int i = 0; i < 500 && !h->ready.load(); ++i) std::this_thread::sleep_for(10ms);
  ASSERT_TRUE(h->ready.load()) << "the holder made no unique id";
  constexpr int n = 3;
  auto body = [&](int rank, const myrUniqueId& id) -> int {
    useTransport(Transport::kShm);
    setenv("MYRIAD_INIT_TIMEOUT_MS", "5000", 1);
    myrComm_t comm = nullptr;
    std::string err = initComm(&comm, n, id, rank);
    MYR_CHILD_CHECK(err.empty(), err);
    float one = 1.0f, sum = 0.0f;
    myrResult_t res = myrAllReduce(&one, &sum, 1, myrFloat32, myrSum, comm, nullptr);
    MYR_CHILD_CHECK(res == myrSuccess, resultText("the all-reduce before the kill", res, comm));
    if (rank == 0) kill(h->pid.load(), SIGKILL);
    std::this_thread::sleep_for(500ms);
    std::vector<double> send(1 << 16), recv(1 << 16);
    for (int calls = 0; calls < 30; ++calls) {
      for (size_t i = 0; i < send.size(); i += 4099) send[i] = rank + calls;
      res = myrAllReduce(send.data(), recv.data(), send.size(), myrFloat64, myrSum, comm, nullptr);
      MYR_CHILD_CHECK(res == myrSuccess, resultText("an all-reduce after the store host died", res, comm));
      MYR_CHILD_CHECK(recv[4099] == 3.0 * calls + 3.0, "wrong sum after the store host died");
      // A rank late now and then makes the others stall, which is when the store used to be read.
      if (calls % 7 == rank) std::this_thread::sleep_for(100ms);
    }
    myrComm_t child = nullptr;
    const auto s0 = std::chrono::steady_clock::now();
    res = myrCommSplit(comm, 0, rank, &child, nullptr);
    const double took = std::chrono::duration<double>(std::chrono::steady_clock::now() - s0).count();
    const char* text = myrGetLastError(comm);
    const std::string what = resultText("myrCommSplit", res, nullptr) + " after " + std::to_string(took) + " s: \"" +
                             (text ? text : "") + "\"";
    MYR_CHILD_CHECK(res != myrSuccess, "a split without a store succeeded");
    MYR_CHILD_CHECK(took < 10.0, "the split took long to fail: " + what);
    MYR_CHILD_CHECK(std::string(text ? text : "").find("rendezvous") != std::string::npos,
                    "the error does not say the store is gone: " + what);
    (void)myrCommAbort(comm);
    return 0;
  };
  const ForkOutcome out = forkRanksWithId(n, h->id, body, 60s, testSeed());
  kill(holder, SIGKILL);
  int status = 0;
  while (waitpid(holder, &status, 0) < 0 && errno == EINTR) {
  }
  munmap(page, sizeof(Holder));
  EXPECT_TRUE(out.allSucceeded()) << out.describeFailures();
}

}  // namespace
}  // namespace myriad::test
