// unit tier: CpuWaiters, the executor's "does any task wait for a CPU?" probe: the /proc/loadavg parser on
// well-formed and malformed text, and the live probe with more busy threads than CPUs.
#include "base/cpu_waiters.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <string>
#include <thread>
#include <vector>

namespace myriad {
namespace {

int parse(const std::string& text) {
  return CpuWaiters::runnableIn(text.data(), text.size());
}

TEST(CpuWaiters, ParsesTheRunnableCount) {
  EXPECT_EQ(parse("0.50 0.40 0.30 3/250 12345\n"), 3);
  EXPECT_EQ(parse("12.01 9.87 4.20 117/4096 999999\n"), 117);
  EXPECT_EQ(parse("0.00 0.00 0.00 1/1 1"), 1);
}

TEST(CpuWaiters, RejectsMalformedText) {
  EXPECT_EQ(parse(""), -1);
  EXPECT_EQ(parse("0.50 0.40 0.30"), -1);                  // no fourth field
  EXPECT_EQ(parse("0.50 0.40 0.30 3"), -1);                // cut before the '/'
  EXPECT_EQ(parse("0.50 0.40 0.30 /250 1"), -1);           // no digits
  EXPECT_EQ(parse("0.50 0.40 0.30 x3/250 1"), -1);         // not a number
  EXPECT_EQ(parse("0.50 0.40 0.30 12345678901/2 1"), -1);  // absurdly long
}

TEST(CpuWaiters, SeesMoreBusyThreadsThanCpus) {
  if (access("/proc/loadavg", R_OK) != 0) GTEST_SKIP() << "no /proc/loadavg here";
  long cpus = sysconf(_SC_NPROCESSORS_ONLN);
  ASSERT_GT(cpus, 0);
  std::atomic<bool> stop{false};
  std::vector<std::thread> busy;
  for (long i = 0; i < cpus + 2; ++i)
    busy.emplace_back([&] {
      while (!stop.load(std::memory_order_relaxed)) {
      }
    });
  // cpus + 2 spinning threads plus this one: runnable exceeds the CPUs whenever the kernel samples it.
  CpuWaiters probe;
  int seen = 0;
  for (int i = 0; i < 20; ++i) {
    seen += probe.any(Clock::now()) ? 1 : 0;
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  stop = true;
  for (auto& t : busy) t.join();
  EXPECT_GE(seen, 15) << "of 20 probes with " << cpus + 2 << " busy threads on " << cpus << " CPUs";
}

}  // namespace
}  // namespace myriad
