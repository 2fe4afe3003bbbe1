// Timed loops and cross-rank numbers. Gathering is an all-reduce (uint8 sum) of a zeroed buffer in which
// each rank wrote only its own slot: exact, and needs nothing from the library beyond all-reduce.
#include "benchmarks/common/timing.h"

#include <chrono>
#include <cstring>

namespace myriad::bench {
namespace {

bool allReduceDoubles(const RankContext& ctx, double* values, size_t count, myrRedOp_t op, std::string* error) {
  const myrResult_t res = myrAllReduce(values, values, count, myrFloat64, op, ctx.comm, nullptr);
  if (res == myrSuccess) return true;
  *error = callError("myrAllReduce (cross-rank numbers)", res, ctx.comm);
  return false;
}

}  // namespace

std::string callError(const char* call, myrResult_t result, myrComm_t comm) {
  std::string text = std::string(call) + " failed: " + myrGetErrorString(result);
  const char* last = comm != nullptr ? myrGetLastError(comm) : nullptr;
  if (last != nullptr && *last != '\0') text += std::string(": ") + last;
  return text;
}

bool syncStream(const RankContext& ctx, std::string* error) {
  if (ctx.stream == nullptr) return true;
  const myrResult_t res = myrStreamSynchronize(ctx.stream);
  if (res == myrSuccess) return true;
  *error = callError("myrStreamSynchronize", res, ctx.comm);
  return false;
}

bool timeCalls(const RankContext& ctx, int warmup, int iters, const std::function<myrResult_t()>& call, double* seconds,
               std::string* error) {
  for (int i = 0; i < warmup; ++i) {
    const myrResult_t res = call();
    if (res != myrSuccess) {
      *error = callError("warmup call", res, ctx.comm);
      return false;
    }
  }
  if (!syncStream(ctx, error)) return false;
  double barrier = 0;  // ranks leave the barrier together, so their clocks start close to each other
  if (!allReduceDoubles(ctx, &barrier, 1, myrSum, error)) return false;
  const auto t0 = std::chrono::steady_clock::now();
  for (int i = 0; i < iters; ++i) {
    const myrResult_t res = call();
    if (res != myrSuccess) {
      *error = callError("timed call", res, ctx.comm);
      return false;
    }
  }
  if (!syncStream(ctx, error)) return false;
  const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  *seconds = elapsed / (iters > 0 ? iters : 1);
  return true;
}

bool combineAcrossRanks(const RankContext& ctx, double value, Average how, double* combined, std::string* error) {
  double v = value;
  switch (how) {
    case Average::kRank0:
      v = ctx.rank == 0 ? value : 0.0;
      if (!allReduceDoubles(ctx, &v, 1, myrSum, error)) return false;
      break;
    case Average::kMean:
      if (!allReduceDoubles(ctx, &v, 1, myrSum, error)) return false;
      v /= ctx.nranks;
      break;
    case Average::kMin:
      if (!allReduceDoubles(ctx, &v, 1, myrMin, error)) return false;
      break;
    case Average::kMax:
      if (!allReduceDoubles(ctx, &v, 1, myrMax, error)) return false;
      break;
  }
  *combined = v;
  return true;
}

bool sumAcrossRanks(const RankContext& ctx, double value, double* sum, std::string* error) {
  double v = value;
  if (!allReduceDoubles(ctx, &v, 1, myrSum, error)) return false;
  *sum = v;
  return true;
}

bool gatherBytes(const RankContext& ctx, const void* mine, size_t bytes, std::vector<unsigned char>* all,
                 std::string* error) {
  all->assign(bytes * static_cast<size_t>(ctx.nranks), 0);
  std::memcpy(all->data() + bytes * static_cast<size_t>(ctx.rank), mine, bytes);
  const myrResult_t res = myrAllReduce(all->data(), all->data(), all->size(), myrUint8, myrSum, ctx.comm, nullptr);
  if (res == myrSuccess) return true;
  *error = callError("myrAllReduce (gathering rank descriptions)", res, ctx.comm);
  return false;
}

}  // namespace myriad::bench
