// myrCommRegister / myrCommDeregister over the host transports (shm, shm with CMA, tcp), through the public
// API: bad arguments are refused with their documented codes and leave the communicator working; a buffer
// freed and mapped again at the same address after any registration pattern gives right results (see
// tests/common/remap_check.h); deregistering waits for the calls queued on a stream. The rdma transport's
// registrations are tested in the VM (tests/rdma/rdma_register_test.cc).
#include <gtest/gtest.h>

#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

#include "myriad/myriad.h"
#include "tests/common/fork_ranks.h"
#include "tests/common/mp_helpers.h"
#include "tests/common/remap_check.h"

namespace myriad::test {
namespace {

using namespace std::chrono_literals;

TEST(Register, BadArgumentsAreRefusedAndChangeNothing) {
  const uint64_t seed = testSeed();
  auto body = [&](int rank, const myrUniqueId& id) -> int {
    useTransport(Transport::kShm);
    return runInChild(2, rank, id, false, [&](myrComm_t comm, myrStream_t) -> std::string {
      std::vector<char> buf(4096);
      void* handle = reinterpret_cast<void*>(1);
      const std::vector<std::string> errors = {
          expectError("NULL comm", myrCommRegister(nullptr, buf.data(), buf.size(), &handle), myrInvalidArgument,
                      nullptr, "comm"),
          handle == nullptr ? "" : "a refused registration left the output handle set",
          expectError("NULL handle", myrCommRegister(comm, buf.data(), buf.size(), nullptr), myrInvalidArgument, comm,
                      "handle"),
          expectError("NULL buff", myrCommRegister(comm, nullptr, 64, &handle), myrInvalidArgument, comm, "buff"),
          expectError("size 0", myrCommRegister(comm, buf.data(), 0, &handle), myrInvalidArgument, comm, "size"),
          expectError("deregister NULL", myrCommDeregister(comm, nullptr), myrInvalidArgument, comm, "handle"),
          expectError("deregister a made-up handle", myrCommDeregister(comm, reinterpret_cast<void*>(0x7777)),
                      myrInvalidArgument, comm, "handle"),
      };
      for (const std::string& e : errors)
        if (!e.empty()) return e;
      // In a group: refused, and the group still ends cleanly.
      myrGroupStart();
      myrResult_t inGroup = myrCommRegister(comm, buf.data(), buf.size(), &handle);
      myrResult_t ended = myrGroupEnd();
      std::string err = expectError("register in a group", inGroup, myrInvalidUsage, comm, "myrGroupStart");
      if (!err.empty()) return err;
      if (ended != myrSuccess) return resultText("myrGroupEnd of an empty group", ended, comm);
      // A good registration, deregistered once; the second time it is unknown.
      myrResult_t res = myrCommRegister(comm, buf.data(), buf.size(), &handle);
      if (res != myrSuccess) return resultText("myrCommRegister", res, comm);
      if (!handle) return "myrCommRegister succeeded without a handle";
      res = myrCommDeregister(comm, handle);
      if (res != myrSuccess) return resultText("myrCommDeregister", res, comm);
      err = expectError("deregister twice", myrCommDeregister(comm, handle), myrInvalidArgument, comm, "handle");
      if (!err.empty()) return err;
      AllReduceCase c;
      c.count = 1009;
      return runAllReduceCase(comm, rank, 2, c, nullptr, seed);
    });
  };
  const ForkOutcome out = forkRanks(2, body, 60s, seed);
  ASSERT_TRUE(out.allSucceeded()) << out.describeFailures();
}

struct RemapParam {
  Transport transport;
  int nranks;
  FirstBuffer how;
};

class RegisterRemap : public testing::TestWithParam<RemapParam> {};

TEST_P(RegisterRemap, FreedAndRemappedBufferGivesRightResults) {
  const RemapParam p = GetParam();
  const uint64_t seed = testSeed();
  auto body = [&](int rank, const myrUniqueId& id) -> int {
    useTransport(p.transport);
    return runInChild(p.nranks, rank, id, false, [&](myrComm_t comm, myrStream_t) -> std::string {
      return runRemapRounds(comm, rank, p.nranks, p.how, 100003, seed).error;
    });
  };
  const ForkOutcome out = forkRanks(p.nranks, body, 90s, seed);
  ASSERT_TRUE(out.allSucceeded()) << out.describeFailures();
}

std::vector<RemapParam> remapParams() {
  std::vector<RemapParam> v;
  for (Transport t : {Transport::kShm, Transport::kShmCma, Transport::kTcp})
    for (FirstBuffer how : {FirstBuffer::kPlain, FirstBuffer::kRegistered, FirstBuffer::kRegisteredAfterUse})
      v.push_back({t, 3, how});
  return v;
}

INSTANTIATE_TEST_SUITE_P(All, RegisterRemap, testing::ValuesIn(remapParams()),
                         [](const testing::TestParamInfo<RemapParam>& i) {
                           return std::string(transportName(i.param.transport)) + "_n" +
                                  std::to_string(i.param.nranks) + "_" + firstBufferName(i.param.how);
                         });

// Deregistering waits for the calls queued on streams: right after it returns, the queued all-reduce on
// the registered buffers has finished (no myrStreamSynchronize in between).
TEST(Register, DeregisterWaitsForQueuedCalls) {
  const uint64_t seed = testSeed();
  auto body = [&](int rank, const myrUniqueId& id) -> int {
    useTransport(Transport::kTcp);
    return runInChild(2, rank, id, true, [&](myrComm_t comm, myrStream_t stream) -> std::string {
      const size_t count = size_t{4} << 20;  // 16 MiB: milliseconds of work, against microseconds to return
      std::vector<float> in(count, static_cast<float>(rank + 1)), out(count, -1.0f);
      void* handles[2] = {nullptr, nullptr};
      myrResult_t res = myrCommRegister(comm, in.data(), count * sizeof(float), &handles[0]);
      if (res == myrSuccess) res = myrCommRegister(comm, out.data(), count * sizeof(float), &handles[1]);
      if (res != myrSuccess) return resultText("myrCommRegister", res, comm);
      for (int i = 0; i < 3; ++i) {
        res = myrAllReduce(in.data(), out.data(), count, myrFloat32, myrSum, comm, stream);
        if (res != myrSuccess) return resultText("myrAllReduce", res, comm);
      }
      for (void* h : handles) {
        res = myrCommDeregister(comm, h);
        if (res != myrSuccess) return resultText("myrCommDeregister", res, comm);
      }
      // Read before synchronising: the last all-reduce must be complete already.
      for (size_t i = 0; i < count; i += 4099)
        if (out[i] != 3.0f)
          return "element " + std::to_string(i) + " is " + std::to_string(out[i]) +
                 " right after myrCommDeregister: it returned before the queued all-reduce finished";
      return syncStream(stream, comm);
    });
  };
  const ForkOutcome out = forkRanks(2, body, 90s, seed);
  ASSERT_TRUE(out.allSucceeded()) << out.describeFailures();
}

}  // namespace
}  // namespace myriad::test
