// See remap_check.h.
#include "tests/common/remap_check.h"

#include <sys/mman.h>

#include <cstring>

#include "tests/common/mp_helpers.h"

namespace myriad::test {
namespace {

constexpr int32_t kUnwritten = 0x5A5A5A5A;

int32_t input(int rank, size_t i, int round, uint64_t salt) {
  return static_cast<int32_t>((static_cast<uint64_t>(i) * 2654435761u + salt + static_cast<uint64_t>(rank) * 97 +
                               static_cast<uint64_t>(round) * 7919) %
                              100000);
}

// The mapping's four buffers: all-reduce in and out, ring send and receive.
struct Buffers {
  int32_t *reduceIn, *reduceOut, *sendOut, *recvIn;
};

Buffers carve(void* base, size_t count) {
  auto* p = static_cast<int32_t*>(base);
  return {p, p + count, p + 2 * count, p + 3 * count};
}

// One round; "" or what differs (with *stale when the old pages' values or the fill show up).
std::string round(myrComm_t comm, int rank, int nranks, const Buffers& b, size_t count, int r, uint64_t salt,
                  bool* stale) {
  const int next = (rank + 1) % nranks, prev = (rank + nranks - 1) % nranks;
  for (size_t i = 0; i < count; ++i) {
    b.reduceIn[i] = input(rank, i, r, salt);
    b.sendOut[i] = input(rank, i, r, salt + 1);
    b.reduceOut[i] = kUnwritten;
    b.recvIn[i] = kUnwritten;
  }
  myrResult_t res = myrAllReduce(b.reduceIn, b.reduceOut, count, myrInt32, myrSum, comm, nullptr);
  if (res != myrSuccess) return resultText("myrAllReduce", res, comm);
  myrGroupStart();
  myrResult_t sent = myrSend(b.sendOut, count, myrInt32, next, comm, nullptr);
  myrResult_t got = myrRecv(b.recvIn, count, myrInt32, prev, comm, nullptr);
  res = myrGroupEnd();
  if (sent != myrSuccess) return resultText("myrSend", sent, comm);
  if (got != myrSuccess) return resultText("myrRecv", got, comm);
  if (res != myrSuccess) return resultText("myrGroupEnd", res, comm);
  for (size_t i = 0; i < count; ++i) {
    int64_t want = 0;
    for (int q = 0; q < nranks; ++q) want += input(q, i, r, salt);
    if (b.reduceOut[i] != want) {
      *stale = r > 0;
      return "round " + std::to_string(r + 1) + ": all-reduce element " + std::to_string(i) + " is " +
             std::to_string(b.reduceOut[i]) + ", want " + std::to_string(want);
    }
    if (b.recvIn[i] != input(prev, i, r, salt + 1)) {
      *stale = r > 0;
      return "round " + std::to_string(r + 1) + ": element " + std::to_string(i) + " received from rank " +
             std::to_string(prev) + " is " + std::to_string(b.recvIn[i]) + ", want " +
             std::to_string(input(prev, i, r, salt + 1));
    }
  }
  return "";
}

std::string registerAndDrop(myrComm_t comm, void* base, size_t bytes) {
  void* handle = nullptr;
  myrResult_t res = myrCommRegister(comm, base, bytes, &handle);
  if (res != myrSuccess) return resultText("myrCommRegister", res, comm);
  res = myrCommDeregister(comm, handle);
  return res == myrSuccess ? "" : resultText("myrCommDeregister", res, comm);
}

}  // namespace

const char* firstBufferName(FirstBuffer how) {
  switch (how) {
    case FirstBuffer::kPlain: return "plain";
    case FirstBuffer::kRegistered: return "registered";
    case FirstBuffer::kRegisteredAfterUse: return "registered_after_use";
  }
  return "?";
}

RemapOutcome runRemapRounds(myrComm_t comm, int rank, int nranks, FirstBuffer how, size_t count, uint64_t salt) {
  RemapOutcome out;
  const size_t bytes = 4 * count * sizeof(int32_t);
  void* base = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (base == MAP_FAILED) {
    out.error = std::string("mmap: ") + strerror(errno);
    return out;
  }
  void* handle = nullptr;
  if (how == FirstBuffer::kRegistered) {
    myrResult_t res = myrCommRegister(comm, base, bytes, &handle);
    if (res != myrSuccess) out.error = resultText("myrCommRegister", res, comm);
  }
  if (out.error.empty()) out.error = round(comm, rank, nranks, carve(base, count), count, 0, salt, &out.stale);
  if (out.error.empty() && how == FirstBuffer::kRegistered) {
    myrResult_t res = myrCommDeregister(comm, handle);
    if (res != myrSuccess) out.error = resultText("myrCommDeregister", res, comm);
  }
  if (out.error.empty() && how == FirstBuffer::kRegisteredAfterUse) out.error = registerAndDrop(comm, base, bytes);
  munmap(base, bytes);
  if (!out.error.empty()) return out;
  void* again = mmap(base, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
  if (again != base) {
    out.error = "could not map a buffer again at the freed address";
    if (again != MAP_FAILED) munmap(again, bytes);
    return out;
  }
  out.error = round(comm, rank, nranks, carve(again, count), count, 1, salt, &out.stale);
  munmap(again, bytes);
  return out;
}

}  // namespace myriad::test
