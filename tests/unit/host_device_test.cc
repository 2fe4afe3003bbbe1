// unit tier: the host-backed device keeps CUDA stream semantics — stream order, events recorded again, flag waits
// and writes (a flag never visible before the writes before it), memory other processes map (a forked child
// ping-pongs through it), deadlocks reported instead of hung, and reductions through streams.
// Its memory is host-mapped, so tests read and write it directly where a GPU test would copy.
#include "device/host_device.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstring>
#include <functional>
#include <set>
#include <thread>
#include <vector>

namespace myriad {
namespace {

using namespace std::chrono_literals;

#define ASSERT_OK(expr)                                       \
  do {                                                        \
    ::myriad::Status s_ = (expr);                             \
    ASSERT_TRUE(s_.isOk()) << #expr << ": " << s_.toString(); \
  } while (0)

template <typename T>
T* devAlloc(Device& d, size_t count) {
  auto r = d.alloc(count * sizeof(T));
  EXPECT_TRUE(r.isOk()) << r.status().toString();
  return static_cast<T*>(r.isOk() ? r.value() : nullptr);
}

DeviceStream* newStream(Device& d) {
  auto r = d.createStream();
  EXPECT_TRUE(r.isOk()) << r.status().toString();
  return r.isOk() ? r.value() : nullptr;
}

DeviceEvent* newEvent(Device& d) {
  auto r = d.createEvent();
  EXPECT_TRUE(r.isOk()) << r.status().toString();
  return r.isOk() ? r.value() : nullptr;
}

uint64_t peek(const uint64_t* flag) {
  return std::atomic_ref<uint64_t>(*const_cast<uint64_t*>(flag)).load(std::memory_order_acquire);
}

// Runs fn in a forked child and returns its exit status (or 128 + signal); kills it after `deadline`.
int runInChild(const std::function<int()>& fn, std::chrono::seconds deadline = 60s) {
  pid_t pid = fork();
  if (pid == 0) _exit(fn());
  auto end = std::chrono::steady_clock::now() + deadline;
  int status = 0;
  while (waitpid(pid, &status, WNOHANG) == 0) {
    if (std::chrono::steady_clock::now() > end) {
      kill(pid, SIGKILL);
      waitpid(pid, &status, 0);
      ADD_FAILURE() << "child " << pid << " ran past its deadline";
      return -1;
    }
    std::this_thread::sleep_for(5ms);
  }
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

// A SharedMemoryHandle over a Unix socket: the fd as SCM_RIGHTS, the size as the payload.
bool sendHandle(int sock, SharedMemoryHandle h) {
  char control[CMSG_SPACE(sizeof(int))] = {};
  iovec iov{&h.bytes, sizeof(h.bytes)};
  msghdr msg{};
  msg.msg_iov = &iov;
  msg.msg_iovlen = 1;
  msg.msg_control = control;
  msg.msg_controllen = sizeof(control);
  cmsghdr* c = CMSG_FIRSTHDR(&msg);
  c->cmsg_level = SOL_SOCKET;
  c->cmsg_type = SCM_RIGHTS;
  c->cmsg_len = CMSG_LEN(sizeof(int));
  std::memcpy(CMSG_DATA(c), &h.fd, sizeof(int));
  bool ok = sendmsg(sock, &msg, 0) == static_cast<ssize_t>(sizeof(h.bytes));
  close(h.fd);
  return ok;
}

bool recvHandle(int sock, SharedMemoryHandle* h) {
  char control[CMSG_SPACE(sizeof(int))] = {};
  iovec iov{&h->bytes, sizeof(h->bytes)};
  msghdr msg{};
  msg.msg_iov = &iov;
  msg.msg_iovlen = 1;
  msg.msg_control = control;
  msg.msg_controllen = sizeof(control);
  if (recvmsg(sock, &msg, MSG_CMSG_CLOEXEC) != static_cast<ssize_t>(sizeof(h->bytes))) return false;
  cmsghdr* c = CMSG_FIRSTHDR(&msg);
  if (c == nullptr || c->cmsg_type != SCM_RIGHTS) return false;
  std::memcpy(&h->fd, CMSG_DATA(c), sizeof(int));
  return true;
}

TEST(HostDevice, RunsAStreamInOrder) {
  HostBackedDevice dev({.orderSeed = 7, .maxOpDelayUs = 20});
  constexpr size_t kN = 400;
  auto* values = devAlloc<uint64_t>(dev, kN);
  auto* slot = devAlloc<uint64_t>(dev, 1);
  auto* log = devAlloc<uint64_t>(dev, kN);
  for (size_t i = 0; i < kN; ++i) values[i] = i * 3 + 1;
  DeviceStream* s = newStream(dev);
  // Each value passes through one slot: the log is right only if every copy ran after the one before it.
  for (size_t i = 0; i < kN; ++i) {
    ASSERT_OK(dev.copy(s, slot, &values[i], 8));
    ASSERT_OK(dev.copy(s, &log[i], slot, 8));
  }
  ASSERT_OK(dev.synchronize(s));
  for (size_t i = 0; i < kN; ++i) ASSERT_EQ(log[i], i * 3 + 1) << "at " << i;
  dev.destroyStream(s);
}

TEST(HostDevice, AWaitOrdersAfterTheRecordIssuedBeforeIt) {
  HostBackedDevice dev;
  auto* f = devAlloc<uint64_t>(dev, 4);  // gate1, gate2, bDone, cDone
  std::memset(f, 0, 32);
  DeviceStream* a = newStream(dev);
  DeviceStream* b = newStream(dev);
  DeviceStream* c = newStream(dev);
  DeviceEvent* e = newEvent(dev);
  ASSERT_OK(dev.waitFlag(a, &f[0], 1));
  ASSERT_OK(dev.record(e, a));  // record #1
  ASSERT_OK(dev.waitEvent(b, e));
  ASSERT_OK(dev.writeFlag(b, &f[2], 1));
  ASSERT_OK(dev.waitFlag(a, &f[1], 1));
  ASSERT_OK(dev.record(e, a));  // record #2
  ASSERT_OK(dev.waitEvent(c, e));
  ASSERT_OK(dev.writeFlag(c, &f[3], 1));
  std::this_thread::sleep_for(20ms);
  EXPECT_EQ(peek(&f[2]), 0u);
  EXPECT_EQ(peek(&f[3]), 0u);
  ASSERT_OK(dev.releaseFlag(&f[0], 1));
  ASSERT_OK(dev.synchronize(b));  // after record #1 only
  EXPECT_EQ(peek(&f[2]), 1u);
  std::this_thread::sleep_for(20ms);
  EXPECT_EQ(peek(&f[3]), 0u) << "a wait issued after record #2 passed before it ran";
  ASSERT_OK(dev.releaseFlag(&f[1], 1));
  ASSERT_OK(dev.synchronize(c));
  EXPECT_EQ(peek(&f[3]), 1u);
  ASSERT_OK(dev.synchronize(a));

  // An event never recorded: the wait is no wait.
  DeviceEvent* fresh = newEvent(dev);
  ASSERT_OK(dev.waitEvent(b, fresh));
  ASSERT_OK(dev.synchronize(b));
  dev.destroyEvent(fresh);
  dev.destroyEvent(e);
}

TEST(HostDevice, AWaitIsForExactlyTheRecordItCaptured) {
  HostBackedDevice dev;
  auto* f = devAlloc<uint64_t>(dev, 2);  // gate, done
  std::memset(f, 0, 16);
  DeviceStream* s1 = newStream(dev);
  DeviceStream* s2 = newStream(dev);
  DeviceStream* s3 = newStream(dev);
  DeviceEvent* e = newEvent(dev);
  ASSERT_OK(dev.waitFlag(s1, &f[0], 1));
  ASSERT_OK(dev.record(e, s1));  // #1, blocked behind the gate
  ASSERT_OK(dev.waitEvent(s2, e));
  ASSERT_OK(dev.writeFlag(s2, &f[1], 1));
  ASSERT_OK(dev.record(e, s3));  // #2 runs at once, but the wait above is for #1
  ASSERT_OK(dev.synchronize(s3));
  std::this_thread::sleep_for(20ms);
  EXPECT_EQ(peek(&f[1]), 0u);
  ASSERT_OK(dev.releaseFlag(&f[0], 1));
  ASSERT_OK(dev.synchronize(s2));
  EXPECT_EQ(peek(&f[1]), 1u);
}

TEST(HostDevice, WaitFlagIsReleasedByWriteFlagOnAnotherStream) {
  for (uint64_t seed = 1; seed <= 4; ++seed) {
    HostBackedDevice dev({.orderSeed = seed, .maxOpDelayUs = 30});
    constexpr size_t kN = 1000;
    auto* f = devAlloc<uint64_t>(dev, 2);  // f, gate
    std::memset(f, 0, 16);
    auto* first = devAlloc<int>(dev, kN);
    auto* second = devAlloc<int>(dev, kN);
    auto* mid = devAlloc<int>(dev, kN);
    auto* out = devAlloc<int>(dev, kN);
    for (size_t i = 0; i < kN; ++i) first[i] = 1, second[i] = 2;
    DeviceStream* consumer = newStream(dev);
    DeviceStream* producer = newStream(dev);
    ASSERT_OK(dev.waitFlag(consumer, &f[0], 5));
    ASSERT_OK(dev.copy(consumer, out, mid, kN * sizeof(int)));
    ASSERT_OK(dev.copy(producer, mid, first, kN * sizeof(int)));
    ASSERT_OK(dev.writeFlag(producer, &f[0], 3));  // not enough
    ASSERT_OK(dev.waitFlag(producer, &f[1], 1));
    ASSERT_OK(dev.copy(producer, mid, second, kN * sizeof(int)));
    ASSERT_OK(dev.writeFlag(producer, &f[0], 5));
    std::this_thread::sleep_for(10ms);
    ASSERT_OK(dev.releaseFlag(&f[1], 1));
    ASSERT_OK(dev.synchronize(consumer));
    for (size_t i = 0; i < kN; ++i) ASSERT_EQ(out[i], 2) << "seed " << seed << " at " << i;
  }
}

TEST(HostDevice, AFlagIsNeverVisibleBeforeTheCopyBeforeIt) {
  HostBackedDevice dev;
  constexpr size_t kBytes = 32 << 20;
  auto* src = devAlloc<unsigned char>(dev, kBytes);
  auto* dst = devAlloc<unsigned char>(dev, kBytes);
  auto* flag = devAlloc<uint64_t>(dev, 1);
  *flag = 0;
  DeviceStream* s = newStream(dev);
  for (uint64_t round = 1; round <= 3; ++round) {
    std::memset(src, static_cast<int>(round), kBytes);
    std::atomic<int> bad{-1};
    std::thread reader([&] {
      while (peek(flag) < round) std::this_thread::yield();
      for (size_t i = kBytes; i-- > 0;)  // back to front: the copy's last bytes are the last to land
        if (dst[i] != round) return bad.store(static_cast<int>(i) + 1);
      bad.store(0);
    });
    ASSERT_OK(dev.copy(s, dst, src, kBytes));
    ASSERT_OK(dev.writeFlag(s, flag, round));
    reader.join();
    ASSERT_EQ(bad.load(), 0) << "round " << round << ": the flag was visible before byte " << bad.load() - 1;
    ASSERT_OK(dev.synchronize(s));
  }
}

TEST(HostDevice, TwoProcessesPingPongThroughImportedMemory) {
  constexpr size_t kCount = 256;
  constexpr uint64_t kIters = 1000;
  constexpr size_t kBytes = kCount * sizeof(int32_t);
  constexpr size_t kData = 64 / sizeof(int32_t);  // a mailbox: a flag word, then the data at byte 64
  auto pattern = [](uint64_t i, size_t j) { return static_cast<int32_t>(i * 7919 + j); };
  int sv[2];
  ASSERT_EQ(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv), 0);

  HostBackedDevice dev({.stallTime = 5000ms});
  auto* mail = devAlloc<int32_t>(dev, kData + kCount);
  auto* mailFlag = reinterpret_cast<uint64_t*>(mail);
  *mailFlag = 0;

  pid_t pid = fork();
  if (pid == 0) {
    close(sv[0]);
    // The child: its own device (the parent's worker thread does not exist here), answers each message +1.
    HostBackedDevice cdev({.stallTime = 5000ms});
    auto* cmail = devAlloc<int32_t>(cdev, kData + kCount);
    auto* cflag = reinterpret_cast<uint64_t*>(cmail);
    auto* ones = devAlloc<int32_t>(cdev, kCount);
    auto* tmp = devAlloc<int32_t>(cdev, kCount);
    auto* clog = devAlloc<int32_t>(cdev, kIters * kCount);
    *cflag = 0;
    for (size_t j = 0; j < kCount; ++j) ones[j] = 1;
    auto h = cdev.exportMemory(cmail);
    SharedMemoryHandle theirs;
    if (!h.isOk() || !sendHandle(sv[1], h.take()) || !recvHandle(sv[1], &theirs)) _exit(2);
    auto imported = cdev.importMemory(std::move(theirs));
    if (!imported.isOk()) _exit(3);
    auto* pmail = static_cast<int32_t*>(imported.value());
    DeviceStream* s = cdev.createStream().value();
    for (uint64_t i = 1; i <= kIters; ++i) {
      bool ok = cdev.waitFlag(s, cflag, i).isOk() &&
                cdev.copy(s, clog + (i - 1) * kCount, cmail + kData, kBytes).isOk() &&
                cdev.reduce(s, tmp, cmail + kData, ones, kCount, myrInt32, myrSum).isOk() &&
                cdev.copy(s, pmail + kData, tmp, kBytes).isOk() &&
                cdev.writeFlag(s, reinterpret_cast<uint64_t*>(pmail), i).isOk();
      if (!ok) _exit(4);
    }
    Status st = cdev.synchronize(s);
    if (!st.isOk()) {
      fprintf(stderr, "child: %s\n", st.toString().c_str());
      _exit(5);
    }
    for (uint64_t i = 1; i <= kIters; ++i)
      for (size_t j = 0; j < kCount; ++j)
        if (clog[(i - 1) * kCount + j] != pattern(i, j)) _exit(6);
    cdev.closeImported(pmail);
    _exit(0);
  }
  ASSERT_GT(pid, 0);
  close(sv[1]);
  auto* src = devAlloc<int32_t>(dev, kIters * kCount);
  auto* log = devAlloc<int32_t>(dev, kIters * kCount);
  for (uint64_t i = 1; i <= kIters; ++i)
    for (size_t j = 0; j < kCount; ++j) src[(i - 1) * kCount + j] = pattern(i, j);
  SharedMemoryHandle theirs;
  ASSERT_TRUE(recvHandle(sv[0], &theirs));
  auto h = dev.exportMemory(mail);
  ASSERT_TRUE(h.isOk()) << h.status().toString();
  ASSERT_TRUE(sendHandle(sv[0], h.take()));
  auto imported = dev.importMemory(std::move(theirs));
  ASSERT_TRUE(imported.isOk()) << imported.status().toString();
  auto* cmail = static_cast<int32_t*>(imported.value());
  DeviceStream* s = newStream(dev);
  dev.setName(s, "parent");
  for (uint64_t i = 1; i <= kIters; ++i) {
    ASSERT_OK(dev.copy(s, cmail + kData, src + (i - 1) * kCount, kBytes));
    ASSERT_OK(dev.writeFlag(s, reinterpret_cast<uint64_t*>(cmail), i));
    ASSERT_OK(dev.waitFlag(s, mailFlag, i));
    ASSERT_OK(dev.copy(s, log + (i - 1) * kCount, mail + kData, kBytes));
  }
  Status st = dev.synchronize(s);
  int status = 0;
  waitpid(pid, &status, 0);
  ASSERT_OK(st);
  ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "child status " << status;
  for (uint64_t i = 1; i <= kIters; ++i)
    for (size_t j = 0; j < kCount; ++j)
      ASSERT_EQ(log[(i - 1) * kCount + j], pattern(i, j) + 1) << "iteration " << i << " element " << j;
  dev.closeImported(cmail);
  close(sv[0]);
}

TEST(HostDevice, ReportsADeadlockInsteadOfHanging) {
  HostBackedDevice dev({.stallTime = 200ms});
  auto* f = devAlloc<uint64_t>(dev, 1);
  *f = 0;
  auto* buf = devAlloc<int>(dev, 16);
  DeviceStream* s = newStream(dev);
  DeviceStream* t = newStream(dev);
  DeviceEvent* e = newEvent(dev);
  dev.setName(s, "rank0.recv from 1");
  dev.setName(t, "rank0.reduce");
  ASSERT_OK(dev.waitFlag(s, f, 1));
  ASSERT_OK(dev.copy(s, buf, buf + 8, 8 * sizeof(int)));
  ASSERT_OK(dev.record(e, s));
  ASSERT_OK(dev.waitEvent(t, e));
  auto start = std::chrono::steady_clock::now();
  Status st = dev.synchronize(t);
  auto took = std::chrono::steady_clock::now() - start;
  ASSERT_FALSE(st.isOk());
  EXPECT_EQ(st.code(), Code::kTimeout);
  EXPECT_LT(took, 5s);
  const std::string& m = st.message();
  EXPECT_NE(m.find("rank0.recv from 1"), std::string::npos) << m;
  EXPECT_NE(m.find(">= 1, which holds 0"), std::string::npos) << m;
  EXPECT_NE(m.find("rank0.reduce"), std::string::npos) << m;
  EXPECT_NE(m.find("record #1"), std::string::npos) << m;
  EXPECT_EQ(dev.stallReport(), m.substr(m.find("deadlock")));
  // Releasing the flag (an abort) lets everything run.
  ASSERT_OK(dev.releaseFlag(f, 1));
  ASSERT_OK(dev.synchronize(t));
  ASSERT_OK(dev.synchronize(s));
}

TEST(HostDevice, ReleaseFlagUnblocksAWaitingStream) {
  HostBackedDevice dev;
  auto* f = devAlloc<uint64_t>(dev, 1);
  *f = 0;
  auto* data = devAlloc<int>(dev, 4);
  std::vector<int> four{4, 3, 2, 1};
  DeviceStream* s = newStream(dev);
  ASSERT_OK(dev.waitFlag(s, f, 9));
  ASSERT_OK(dev.copy(s, data, four.data(), 4 * sizeof(int)));  // a host source, alive until synchronize
  std::atomic<bool> done{false};
  Status result;
  std::thread waiter([&] {
    result = dev.synchronize(s);
    done = true;
  });
  std::this_thread::sleep_for(30ms);
  EXPECT_FALSE(done.load());
  ASSERT_OK(dev.releaseFlag(f, 9));
  waiter.join();
  ASSERT_OK(result);
  EXPECT_EQ(data[0], 4);
  EXPECT_EQ(data[3], 1);
}

TEST(HostDevice, KnowsItsMemory) {
  HostBackedDevice dev;
  auto* p = devAlloc<char>(dev, 10000);
  int onStack = 0;
  std::vector<char> onHeap(100);
  EXPECT_TRUE(dev.isDeviceMemory(p));
  EXPECT_TRUE(dev.isDeviceMemory(p + 9999));
  EXPECT_FALSE(dev.isDeviceMemory(&onStack));
  EXPECT_FALSE(dev.isDeviceMemory(onHeap.data()));
  // Imported in the same process: a second mapping of the same pages.
  auto h = dev.exportMemory(p);
  ASSERT_TRUE(h.isOk()) << h.status().toString();
  auto q = dev.importMemory(h.take());
  ASSERT_TRUE(q.isOk()) << q.status().toString();
  auto* alias = static_cast<char*>(q.value());
  EXPECT_NE(alias, p);
  EXPECT_TRUE(dev.isDeviceMemory(alias + 5000));
  p[1234] = 42;
  EXPECT_EQ(alias[1234], 42);
  dev.closeImported(alias);
  EXPECT_FALSE(dev.isDeviceMemory(alias));
  dev.free(p);
  EXPECT_FALSE(dev.isDeviceMemory(p));
}

TEST(HostDevice, FreshMemoryHoldsGarbage) {
  HostBackedDevice dev;
  auto* a = devAlloc<uint64_t>(dev, 512);
  auto* b = devAlloc<uint64_t>(dev, 512);
  int zeros = 0, same = 0;
  for (int i = 0; i < 512; ++i) zeros += a[i] == 0, same += a[i] == b[i];
  EXPECT_LT(zeros, 2);
  EXPECT_LT(same, 2);
}

TEST(HostDevice, RefusesWhatAGpuWouldNotDo) {
  HostBackedDevice dev;
  EXPECT_FALSE(dev.alloc(0).isOk());
  auto* p = devAlloc<uint64_t>(dev, 64);
  DeviceStream* s = newStream(dev);
  uint64_t host[8] = {};
  auto q = dev.importMemory(dev.exportMemory(p).take());
  ASSERT_TRUE(q.isOk());
  auto* alias = static_cast<uint64_t*>(q.value());
  EXPECT_FALSE(dev.waitFlag(s, alias, 1).isOk()) << "waits poll own memory only";
  EXPECT_TRUE(dev.writeFlag(s, alias, 1).isOk()) << "signals go into a peer's memory";
  EXPECT_FALSE(dev.waitFlag(s, reinterpret_cast<uint64_t*>(reinterpret_cast<char*>(p) + 4), 1).isOk());
  EXPECT_FALSE(dev.waitFlag(s, host, 1).isOk());
  EXPECT_TRUE(dev.copy(s, host, p, 64).isOk()) << "copies may write host memory, as cudaMemcpyAsync";
  EXPECT_FALSE(dev.copy(s, p + 1, p, 64).isOk()) << "overlapping copy";
  EXPECT_FALSE(dev.reduce(s, p, host, p, 8, myrUint64, myrSum).isOk());
  EXPECT_FALSE(dev.exportMemory(p + 1).isOk());
  EXPECT_FALSE(dev.importMemory(SharedMemoryHandle{}).isOk());
  ASSERT_OK(dev.synchronize(s));
  dev.closeImported(alias);
}

// Reductions through a stream against a reference computed here; inputs reach the device as host-source copies.
template <typename T>
void checkReductions(myrDataType_t dtype) {
  HostBackedDevice dev({.orderSeed = 3});
  constexpr size_t kN = 1001;
  std::vector<T> a(kN), b(kN);
  for (size_t i = 0; i < kN; ++i) {
    a[i] = static_cast<T>(static_cast<int>(i % 7) - (std::is_signed_v<T> ? 3 : 0));
    b[i] = static_cast<T>(static_cast<int>(i % 5) + 1);
  }
  auto* da = devAlloc<T>(dev, kN);
  auto* db = devAlloc<T>(dev, kN);
  auto* out = devAlloc<T>(dev, kN);
  DeviceStream* s = newStream(dev);
  for (myrRedOp_t op : {myrSum, myrProd, myrMax, myrMin, myrAvg}) {
    ASSERT_OK(dev.copy(s, da, a.data(), kN * sizeof(T)));
    ASSERT_OK(dev.copy(s, db, b.data(), kN * sizeof(T)));
    ASSERT_OK(dev.reduce(s, out, da, db, kN, dtype, op));
    if (op == myrAvg) ASSERT_OK(dev.scaleAvg(s, out, kN, dtype, 2));
    ASSERT_OK(dev.reduce(s, da, da, db, kN, dtype, myrMax));  // in place, after the read above
    ASSERT_OK(dev.synchronize(s));
    for (size_t i = 0; i < kN; ++i) {
      T x = a[i], y = b[i], want{};
      switch (op) {
        case myrSum: want = static_cast<T>(x + y); break;
        case myrProd: want = static_cast<T>(x * y); break;
        case myrMax: want = std::max(x, y); break;
        case myrMin: want = std::min(x, y); break;
        default: want = static_cast<T>(static_cast<T>(x + y) / 2); break;
      }
      ASSERT_EQ(out[i], want) << "dtype " << dtype << " op " << op << " at " << i;
      ASSERT_EQ(da[i], std::max(x, y));
    }
  }
}

TEST(HostDevice, ReducesThroughStreams) {
  checkReductions<float>(myrFloat32);
  checkReductions<double>(myrFloat64);
  checkReductions<int32_t>(myrInt32);
  checkReductions<int8_t>(myrInt8);
  checkReductions<uint64_t>(myrUint64);
}

// Three streams chained by events both ways (consumers release their producers' buffers), under shuffled stream
// order and random delays: the data is right only if every wait holds.
TEST(HostDevice, ChainsStreamsByEventsUnderShuffledOrder) {
  for (uint64_t seed = 1; seed <= 3; ++seed) {
    HostBackedDevice dev({.orderSeed = seed, .maxOpDelayUs = 40});
    constexpr size_t kN = 64, kRounds = 60;
    auto* src = devAlloc<int32_t>(dev, kRounds * kN);
    auto* out = devAlloc<int32_t>(dev, kRounds * kN);
    auto* ones = devAlloc<int32_t>(dev, kN);
    auto* b0 = devAlloc<int32_t>(dev, kN);
    auto* b1 = devAlloc<int32_t>(dev, kN);
    for (size_t i = 0; i < kRounds * kN; ++i) src[i] = static_cast<int32_t>(i * 13);
    for (size_t i = 0; i < kN; ++i) ones[i] = 1;
    DeviceStream* s[3] = {newStream(dev), newStream(dev), newStream(dev)};
    DeviceEvent* e[3] = {newEvent(dev), newEvent(dev), newEvent(dev)};
    for (size_t r = 0; r < kRounds; ++r) {
      ASSERT_OK(dev.waitEvent(s[0], e[1]));  // stage 1 has read b0 of the last round
      ASSERT_OK(dev.copy(s[0], b0, src + r * kN, kN * 4));
      ASSERT_OK(dev.record(e[0], s[0]));
      ASSERT_OK(dev.waitEvent(s[1], e[0]));
      ASSERT_OK(dev.waitEvent(s[1], e[2]));  // stage 2 has read b1 of the last round
      ASSERT_OK(dev.reduce(s[1], b1, b0, ones, kN, myrInt32, myrSum));
      ASSERT_OK(dev.record(e[1], s[1]));
      ASSERT_OK(dev.waitEvent(s[2], e[1]));
      ASSERT_OK(dev.copy(s[2], out + r * kN, b1, kN * 4));
      ASSERT_OK(dev.record(e[2], s[2]));
    }
    for (DeviceStream* x : s) ASSERT_OK(dev.synchronize(x));
    for (size_t i = 0; i < kRounds * kN; ++i) ASSERT_EQ(out[i], static_cast<int32_t>(i * 13 + 1)) << "seed " << seed;
  }
}

// The shuffle is real: two unordered writes to one word land in either order depending on the seed, so a
// lowering that forgets an ordering fails for some seed instead of passing by luck.
TEST(HostDevice, UnorderedStreamsRunInEitherOrder) {
  std::set<uint64_t> seen;
  for (uint64_t seed = 1; seed <= 40 && seen.size() < 2; ++seed) {
    HostBackedDevice dev({.orderSeed = seed});
    auto* w = devAlloc<uint64_t>(dev, 4);  // gate, target, one, two
    w[0] = 0, w[2] = 1, w[3] = 2;
    DeviceStream* x = newStream(dev);
    DeviceStream* y = newStream(dev);
    ASSERT_OK(dev.waitFlag(x, &w[0], 1));
    ASSERT_OK(dev.waitFlag(y, &w[0], 1));
    ASSERT_OK(dev.copy(x, &w[1], &w[2], 8));
    ASSERT_OK(dev.copy(y, &w[1], &w[3], 8));
    ASSERT_OK(dev.releaseFlag(&w[0], 1));
    ASSERT_OK(dev.synchronize(x));
    ASSERT_OK(dev.synchronize(y));
    seen.insert(w[1]);
  }
  EXPECT_EQ(seen.size(), 2u);
}

TEST(HostDevice, DestructionDiscardsBlockedWork) {
  auto start = std::chrono::steady_clock::now();
  {
    HostBackedDevice dev;
    auto* f = devAlloc<uint64_t>(dev, 1);
    *f = 0;
    DeviceStream* s = newStream(dev);
    ASSERT_OK(dev.waitFlag(s, f, 1));
    for (int i = 0; i < 100; ++i) ASSERT_OK(dev.copy(s, f, f, 8));
    std::this_thread::sleep_for(5ms);
  }
  EXPECT_LT(std::chrono::steady_clock::now() - start, 2s);
}

TEST(ProcessDevice, IsChosenOncePerProcessByTheEnvironment) {
  EXPECT_EQ(runInChild([] {
              setenv("MYRIAD_DEVICE", "host", 1);
              auto d = processDevice();
              if (!d.isOk() || std::string(d.value()->name()) != "host-backed") return 1;
              if (processDevice().value() != d.value()) return 2;
              Device* parents = d.value();
              // A forked child gets a device of its own; the parent's refuses work there.
              return runInChild([parents] {
                auto mine = processDevice();
                if (!mine.isOk() || mine.value() == parents) return 3;
                if (parents->createStream().isOk()) return 4;
                Device& dev = *mine.value();
                auto* buf = devAlloc<uint64_t>(dev, 2);
                buf[0] = 17;
                DeviceStream* s = dev.createStream().value();
                if (!dev.copy(s, &buf[1], &buf[0], 8).isOk() || !dev.synchronize(s).isOk()) return 5;
                return buf[1] == 17 ? 0 : 6;
              });
            }),
            0);
  EXPECT_EQ(runInChild([] {
              setenv("MYRIAD_DEVICE", "none", 1);
              auto d = processDevice();
              if (d.isOk() || d.status().message().find("MYRIAD_DEVICE=none") == std::string::npos) return 1;
              setenv("MYRIAD_DEVICE", "host", 1);  // the answer never changes within a process
              return processDevice().isOk() ? 2 : 0;
            }),
            0);
  EXPECT_EQ(runInChild([] {
              setenv("MYRIAD_DEVICE", "gpu", 1);
              auto d = processDevice();
              return !d.isOk() && d.status().message().find("MYRIAD_DEVICE") != std::string::npos ? 0 : 1;
            }),
            0);
#ifndef MYRIAD_HAVE_CUDA
  EXPECT_EQ(runInChild([] {
              unsetenv("MYRIAD_DEVICE");
              auto d = processDevice();
              return !d.isOk() && d.status().message().find("built without CUDA") != std::string::npos ? 0 : 1;
            }),
            0);
#endif
}

}  // namespace
}  // namespace myriad
