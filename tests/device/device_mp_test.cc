// The device tier over real processes: forked ranks with MYRIAD_DEVICE=host (or, in the gpu tier,
// MYRIAD_TEST_DEVICE=cuda: the same tests on a real GPU, several processes sharing it through CUDA IPC) call the public
// C API on device memory (myrMemAlloc of the host-backed device) with a device stream, as a CUDA program passes its
// cudaStream_t — so the dispatch, the pair handshake of transports/cuda_ipc (memfd descriptors over a Unix
// socket) and the lowering run as they do on a GPU. Every collective and send/recv at 2-4 ranks, in and out of
// place, counts 0, 1, n-1 and 100,003 (on a GPU 1,000,003, and 64 Mi for all-reduce), against references
// computed here; stream order (a producer copy
// before the call and a consumer copy after it, no host wait between); and the errors of bad mixes.
#include <gtest/gtest.h>
#include <stdlib.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include "device/device.h"
#include "myriad/myriad.h"
#include "tests/common/fork_ranks.h"
#include "tests/common/mp_helpers.h"

namespace myriad::test {
namespace {

using namespace std::chrono_literals;

// A rank's view of the device: buffers of myrMemAlloc, one stream, and copies between host vectors and
// device buffers through the stream (device memory is not the host's on a GPU).
struct Dev {
  Device* device = nullptr;
  DeviceStream* stream = nullptr;
  std::vector<void*> owned;

  std::string open() {
    auto d = processDevice();
    if (!d.isOk()) return "no device: " + d.status().message();
    device = d.value();
    auto s = device->createStream();
    if (!s.isOk()) return "no stream: " + s.status().message();
    stream = s.value();
    return "";
  }
  float* floats(size_t n) {
    void* p = nullptr;
    if (myrMemAlloc(&p, (n + 1) * sizeof(float)) != myrSuccess) return nullptr;
    owned.push_back(p);
    return static_cast<float*>(p);
  }
  myrStream_t s() const { return reinterpret_cast<myrStream_t>(stream); }
  // dst[0, v.size()) = v, waiting for it (and for everything before it on the stream).
  std::string put(float* dst, const std::vector<float>& v) {
    if (v.empty()) return "";
    Status st = device->copy(stream, dst, v.data(), v.size() * sizeof(float));
    return st.isOk() ? sync() : "copy to the device: " + st.message();
  }
  std::string get(const float* src, size_t n, std::vector<float>* out) {
    out->assign(n, 0);
    if (n == 0) return sync();
    Status st = device->copy(stream, out->data(), src, n * sizeof(float));
    return st.isOk() ? sync() : "copy from the device: " + st.message();
  }
  std::string sync() {
    Status st = device->synchronize(stream);
    return st.isOk() ? "" : "stream: " + st.message();
  }
  // Frees every buffer (after a sync: nothing enqueued may still use them).
  void releaseAll() {
    if (stream) (void)sync();
    for (void* p : owned) myrMemFree(p);
    owned.clear();
  }
  ~Dev() { releaseAll(); }
};

float value(int rank, size_t i) {
  return static_cast<float>((rank * 7 + static_cast<int>(i % 101)) % 64);
}

std::string expectEq(const std::string& what, const std::vector<float>& got, const std::vector<float>& want) {
  for (size_t i = 0; i < want.size(); ++i)
    if (got[i] != want[i])
      return what + ": element " + std::to_string(i) + " is " + std::to_string(got[i]) + ", want " +
             std::to_string(want[i]);
  return "";
}

enum class Call {
  kAllReduce,
  kAllGather,
  kReduceScatter,
  kBroadcast,
  kReduce,
  kAllToAll,
  kGather,
  kScatter,
  kSendRecv
};

const char* name(Call c) {
  const char* names[] = {"allreduce", "allgather", "reducescatter", "broadcast", "reduce",
                         "alltoall",  "gather",    "scatter",       "sendrecv"};
  return names[static_cast<int>(c)];
}

// One call on every rank; "" or what is wrong on this rank.
std::string runCase(myrComm_t comm, Dev& d, Call call, int rank, int n, size_t count, bool inPlace) {
  const size_t un = static_cast<size_t>(n);
  const std::string what = std::string(name(call)) + " count " + std::to_string(count) + (inPlace ? " in place" : "") +
                           " rank " + std::to_string(rank);
  size_t sendN = count, recvN = count;
  if (call == Call::kAllGather || call == Call::kGather) recvN = count * un;
  if (call == Call::kReduceScatter || call == Call::kScatter) sendN = count * un;
  if (call == Call::kAllToAll) sendN = recvN = count * un;
  float* send = nullptr;
  float* recv = nullptr;
  if (!inPlace) {
    send = d.floats(sendN);
    recv = d.floats(recvN);
    if (!send || !recv) return what + ": myrMemAlloc failed";
    std::vector<float> v(sendN);
    for (size_t i = 0; i < sendN; ++i) v[i] = value(rank, i);
    if (std::string e = d.put(send, v) + d.put(recv, std::vector<float>(recvN, -1)); !e.empty()) return what + ": " + e;
  } else {  // NCCL's in-place forms: one buffer, the rank's block of it where the call says
    float* buf = d.floats(std::max(sendN, recvN));
    if (!buf) return what + ": myrMemAlloc failed";
    if (std::string e = d.put(buf, std::vector<float>(std::max(sendN, recvN), -1)); !e.empty()) return what + ": " + e;
    const bool blockIn = call == Call::kAllGather || call == Call::kGather;
    const bool blockOut = call == Call::kReduceScatter || call == Call::kScatter;
    send = blockIn ? buf + rank * count : buf;
    recv = blockOut ? buf + rank * count : buf;
    std::vector<float> v(sendN);
    for (size_t i = 0; i < sendN; ++i) v[i] = value(rank, i);
    if (std::string e = d.put(send, v); !e.empty()) return what + ": " + e;
  }
  const int root = n - 1;
  myrResult_t r = myrSuccess;
  switch (call) {
    case Call::kAllReduce: r = myrAllReduce(send, recv, count, myrFloat32, myrSum, comm, d.s()); break;
    case Call::kAllGather: r = myrAllGather(send, recv, count, myrFloat32, comm, d.s()); break;
    case Call::kReduceScatter: r = myrReduceScatter(send, recv, count, myrFloat32, myrSum, comm, d.s()); break;
    case Call::kBroadcast: r = myrBroadcast(send, recv, count, myrFloat32, root, comm, d.s()); break;
    case Call::kReduce: r = myrReduce(send, recv, count, myrFloat32, myrSum, root, comm, d.s()); break;
    case Call::kAllToAll: r = myrAllToAll(send, recv, count, myrFloat32, comm, d.s()); break;
    case Call::kGather: r = myrGather(send, recv, count, myrFloat32, root, comm, d.s()); break;
    case Call::kScatter: r = myrScatter(send, recv, count, myrFloat32, root, comm, d.s()); break;
    case Call::kSendRecv:  // a ring: send to the right, receive from the left
      myrGroupStart();
      myrSend(send, count, myrFloat32, (rank + 1) % n, comm, d.s());
      myrRecv(recv, count, myrFloat32, (rank + n - 1) % n, comm, d.s());
      r = myrGroupEnd();
      break;
  }
  if (r != myrSuccess) return what + ": " + resultText(name(call), r, comm);
  std::vector<float> got;
  if (std::string e = d.get(recv, recvN, &got); !e.empty()) return what + ": " + e;

  std::vector<float> want;
  auto sum = [&](size_t i) {
    float s = 0;
    for (int q = 0; q < n; ++q) s += value(q, i);
    return s;
  };
  switch (call) {
    case Call::kAllReduce:
      for (size_t i = 0; i < count; ++i) want.push_back(sum(i));
      break;
    case Call::kReduce:
      if (rank != root) return "";
      for (size_t i = 0; i < count; ++i) want.push_back(sum(i));
      break;
    case Call::kReduceScatter:
      for (size_t i = 0; i < count; ++i) want.push_back(sum(rank * count + i));
      break;
    case Call::kAllGather:
    case Call::kGather:
      if (call == Call::kGather && rank != root) return "";
      for (int q = 0; q < n; ++q)
        for (size_t i = 0; i < count; ++i) want.push_back(value(q, i));
      break;
    case Call::kBroadcast:
      for (size_t i = 0; i < count; ++i) want.push_back(value(root, i));
      break;
    case Call::kAllToAll:
      for (int q = 0; q < n; ++q)
        for (size_t i = 0; i < count; ++i) want.push_back(value(q, rank * count + i));
      break;
    case Call::kScatter:
      for (size_t i = 0; i < count; ++i) want.push_back(value(root, rank * count + i));
      break;
    case Call::kSendRecv:
      for (size_t i = 0; i < count; ++i) want.push_back(value((rank + n - 1) % n, i));
      break;
  }
  return expectEq(what, got, want);
}

// The device these tests run on: MYRIAD_TEST_DEVICE (host, the default, or cuda).
std::string testDevice() {
  const char* d = ::getenv("MYRIAD_TEST_DEVICE");
  return d && *d ? d : "host";
}

// Selects the test device for the ranks about to be forked; "" or why there is none (then the test is
// skipped: only the gpu tier asks for cuda, and ctest reports it skipped, never passed). The probe runs in a
// child: CUDA must not be initialised in the parent that forks the ranks.
std::string useTestDevice() {
  ::setenv("MYRIAD_DEVICE", testDevice().c_str(), 1);
  ForkOutcome probe = forkRanksWithoutId(
      1,
      [](int, const myrUniqueId&) {
        auto d = processDevice();
        if (!d.isOk()) childReport(d.status().message());
        return d.isOk() ? 0 : 1;
      },
      60s);
  if (probe.allSucceeded()) return "";
  return "no " + testDevice() + " device: " + (probe.ranks.empty() ? probe.setupError : probe.ranks[0].report);
}

#define USE_TEST_DEVICE()                                      \
  do {                                                         \
    std::string why = useTestDevice();                         \
    if (!why.empty() && testDevice() == "host") FAIL() << why; \
    if (!why.empty()) GTEST_SKIP() << why;                     \
  } while (0)

int child(int n, int rank, const myrUniqueId& id, const std::function<std::string(myrComm_t, Dev&)>& body) {
  Dev d;
  std::string err = d.open();
  myrComm_t comm = nullptr;
  if (err.empty()) err = initComm(&comm, n, id, rank);
  if (err.empty()) err = body(comm, d);
  if (comm) myrCommDestroy(comm);
  if (!err.empty()) childReport(err);
  return err.empty() ? 0 : 1;
}

// 0, 1, n-1 and 100,003 elements; on a GPU (the gpu tier) 1,000,003 instead, and 64 Mi for all-reduce.
std::vector<size_t> counts(Call c, int n) {
  std::vector<size_t> out{0, 1, static_cast<size_t>(n - 1)};
  const bool gpu = testDevice() == "cuda";
  out.push_back(gpu ? 1000003 : 100003);
  if (gpu && c == Call::kAllReduce) out.push_back(size_t{64} << 20);
  return out;
}

class DeviceMp : public testing::TestWithParam<int> {};

TEST_P(DeviceMp, EveryCollectiveOnDeviceMemory) {
  const int n = GetParam();
  USE_TEST_DEVICE();
  ::setenv("MYRIAD_DEVICE_SLOT_BYTES", "4096", 1);  // many pieces per message, senders out of room
  ::setenv("MYRIAD_DEVICE_SLOTS", "2", 1);
  auto body = [n](int rank, const myrUniqueId& id) {
    return child(n, rank, id, [&](myrComm_t comm, Dev& d) -> std::string {
      for (Call c : {Call::kAllReduce, Call::kAllGather, Call::kReduceScatter, Call::kBroadcast, Call::kReduce,
                     Call::kAllToAll, Call::kGather, Call::kScatter, Call::kSendRecv})
        for (size_t count : counts(c, n))
          for (bool inPlace : {false, true})
            if (!(inPlace && c == Call::kSendRecv)) {  // a buffer sent and received at once is no call
              std::string e = runCase(comm, d, c, rank, n, count, inPlace);
              d.releaseAll();
              if (!e.empty()) return e;
            }
      myrResult_t b = myrBarrier(comm, d.s());
      if (b != myrSuccess) return resultText("myrBarrier", b, comm);
      return d.sync();
    });
  };
  const ForkOutcome out = forkRanks(n, body, 120s, testSeed());
  ASSERT_TRUE(out.allSucceeded()) << out.describeFailures();
}

INSTANTIATE_TEST_SUITE_P(Ranks, DeviceMp, testing::Values(2, 3, 4));

// The call runs after what the stream already holds, and what follows waits for it: a copy into the send
// buffer before the call and a copy out of the receive buffer after it, with no host wait in between.
TEST(DeviceMpOrder, ProducerCallConsumerInStreamOrder) {
  USE_TEST_DEVICE();
  const int n = 3;
  const size_t count = 300007;
  auto body = [](int rank, const myrUniqueId& id) {
    return child(n, rank, id, [&](myrComm_t comm, Dev& d) -> std::string {
      float* staged = d.floats(count);
      float* send = d.floats(count);
      float* recv = d.floats(count);
      float* out = d.floats(count);
      std::vector<float> v(count);
      for (size_t i = 0; i < count; ++i) v[i] = value(rank, i);
      if (std::string e = d.put(staged, v) + d.put(send, std::vector<float>(count, -7)); !e.empty()) return e;
      for (int round = 0; round < 3; ++round) {
        if (!d.device->copy(d.stream, send, staged, count * 4).isOk()) return "producer copy refused";
        myrResult_t r = myrAllReduce(send, recv, count, myrFloat32, myrSum, comm, d.s());
        if (r != myrSuccess) return resultText("myrAllReduce", r, comm);
        if (!d.device->copy(d.stream, out, recv, count * 4).isOk()) return "consumer copy refused";
      }
      std::vector<float> got;
      if (std::string e = d.get(out, count, &got); !e.empty()) return e;
      std::vector<float> want(count);
      for (size_t i = 0; i < count; ++i) {
        want[i] = 0;
        for (int q = 0; q < n; ++q) want[i] += value(q, i);
      }
      return expectEq("consumer's copy", got, want);
    });
  };
  const ForkOutcome out = forkRanks(n, body, 120s, testSeed());
  ASSERT_TRUE(out.allSucceeded()) << out.describeFailures();
}

// Host and device buffers in one call, device buffers on a host stream, host buffers on a device stream:
// each a clear InvalidArgument on the calling rank, nothing enqueued (the communicator goes on working).
TEST(DeviceMpErrors, MixedBuffersAndStreamsAreRefused) {
  USE_TEST_DEVICE();
  const int n = 2;
  auto body = [](int rank, const myrUniqueId& id) {
    return child(n, rank, id, [&](myrComm_t comm, Dev& d) -> std::string {
      float* dev = d.floats(16);
      std::vector<float> host(16, 1.0f);
      myrStream_t hostStream = nullptr;
      if (myrStreamCreate(&hostStream) != myrSuccess) return "myrStreamCreate failed";
      std::string err = expectError("host+device", myrAllReduce(host.data(), dev, 16, myrFloat32, myrSum, comm, d.s()),
                                    myrInvalidArgument, comm, "both");
      if (err.empty())
        err = expectError("device on host stream", myrAllReduce(dev, dev, 16, myrFloat32, myrSum, comm, hostStream),
                          myrInvalidArgument, comm, "stream");
      if (err.empty())
        err = expectError("host on device stream",
                          myrAllReduce(host.data(), host.data(), 16, myrFloat32, myrSum, comm, d.s()),
                          myrInvalidArgument, comm, "stream");
      myrStreamDestroy(hostStream);
      if (!err.empty()) return err;
      // Still usable: a good call after the refused ones.
      if (std::string e = d.put(dev, std::vector<float>(16, static_cast<float>(rank + 1))); !e.empty()) return e;
      myrResult_t r = myrAllReduce(dev, dev, 16, myrFloat32, myrSum, comm, d.s());
      if (r != myrSuccess) return resultText("myrAllReduce", r, comm);
      std::vector<float> got;
      if (std::string e = d.get(dev, 16, &got); !e.empty()) return e;
      return expectEq("after the refusals", got, std::vector<float>(16, 3.0f));
    });
  };
  const ForkOutcome out = forkRanks(n, body, 60s, testSeed());
  ASSERT_TRUE(out.allSucceeded()) << out.describeFailures();
}

}  // namespace
}  // namespace myriad::test

namespace myriad::test {
namespace {

// A rank that dies while the others' device streams wait on it: every survivor's stream is released and its
// communicator reports an error naming the dead rank, within seconds (the device watch, core/device_watch.cc).
TEST(DeviceMpFailure, DeadPeerIsNamedAndWaitsAreReleased) {
  USE_TEST_DEVICE();
  const int n = 3, victim = 1;
  auto body = [](int rank, const myrUniqueId& id) {
    return child(n, rank, id, [&](myrComm_t comm, Dev& d) -> std::string {
      float* buf = d.floats(4096);
      if (std::string e = d.put(buf, std::vector<float>(4096, 1.0f)); !e.empty()) return e;
      myrResult_t r = myrAllReduce(buf, buf, 4096, myrFloat32, myrSum, comm, d.s());  // channels open
      if (r != myrSuccess) return resultText("myrAllReduce", r, comm);
      if (std::string e = d.sync(); !e.empty()) return e;
      if (rank == victim) ::_exit(0);  // gone without a word, channels and all
      auto start = std::chrono::steady_clock::now();
      r = myrAllReduce(buf, buf, 4096, myrFloat32, myrSum, comm, d.s());
      // Enqueueing needs nobody; the stream then waits for the victim until the watch releases it. A survivor
      // scheduled late may find the death already known: the call is then refused, naming the victim.
      std::string synced = "not enqueued";
      if (r == myrSuccess) {
        synced = d.sync();
      } else if (r != myrRemoteError) {
        return resultText("second myrAllReduce", r, comm);
      }
      double waited = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      myrResult_t async = myrSuccess;
      myrCommGetAsyncError(comm, &async);
      std::string text = myrGetLastError(comm);
      if (async == myrSuccess) return "no asynchronous error after the peer died (stream: " + synced + ")";
      if (!mentionsRank(text, victim)) return "the error does not name rank 1: " + text;
      if (waited > 5.0) return "the survivors' stream was released after " + std::to_string(waited) + " s";
      childReport("released after " + std::to_string(waited) + " s: " + text);
      return "";
    });
  };
  const ForkOutcome out = forkRanks(n, body, 60s, testSeed());
  for (const RankOutcome& r : out.ranks) {
    if (r.rank != victim) {
      EXPECT_TRUE(r.succeeded()) << r.describe();
    }
  }
}

}  // namespace
}  // namespace myriad::test

namespace myriad::test {
namespace {

// Destroying a communicator whose device work waits on a live peer that never makes its part of the call
// returns after the silence deadline (MYRIAD_TIMEOUT_MS) with the waits released, never hangs.
TEST(DeviceMpFailure, DestroyWithUnfinishedWorkReturns) {
  USE_TEST_DEVICE();
  ::setenv("MYRIAD_TIMEOUT_MS", "1000", 1);
  const int n = 2;
  auto body = [](int rank, const myrUniqueId& id) {
    Dev d;
    std::string err = d.open();
    myrComm_t comm = nullptr;
    if (err.empty()) err = initComm(&comm, n, id, rank);
    float* buf = err.empty() ? d.floats(1024) : nullptr;
    if (err.empty()) err = d.put(buf, std::vector<float>(1024, 1.0f));
    if (err.empty() && myrAllReduce(buf, buf, 1024, myrFloat32, myrSum, comm, d.s()) != myrSuccess)
      err = "first all-reduce failed";
    if (err.empty()) err = d.sync();
    if (err.empty() && rank == 0 && myrAllReduce(buf, buf, 1024, myrFloat32, myrSum, comm, d.s()) != myrSuccess)
      err = "second all-reduce was not enqueued";  // rank 1 never makes this call
    auto start = std::chrono::steady_clock::now();
    if (comm) myrCommDestroy(comm);
    double took = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (err.empty() && rank == 1) std::this_thread::sleep_for(std::chrono::seconds(3));  // alive, silent
    if (err.empty() && took > 10) err = "myrCommDestroy took " + std::to_string(took) + " s";
    if (err.empty()) err = d.sync();  // the released stream finishes
    d.releaseAll();
    if (!err.empty()) childReport(err);
    return err.empty() ? 0 : 1;
  };
  const ForkOutcome out = forkRanks(n, body, 60s, testSeed());
  ::unsetenv("MYRIAD_TIMEOUT_MS");
  ASSERT_TRUE(out.allSucceeded()) << out.describeFailures();
}

}  // namespace
}  // namespace myriad::test
