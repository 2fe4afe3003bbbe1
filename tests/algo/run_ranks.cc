// runRanks over a MemoryStore; every rank's communicator is created on its own thread.
#include "run_ranks.h"

#include <memory>
#include <thread>

#include "capi/internal.h"
#include "core/config.h"

namespace myriad::test {

std::vector<RankResult> runRanks(int n, const std::function<std::string(int, myrComm_t)>& body,
                                 const std::string& algo) {
  auto store = std::make_shared<MemoryStore>();
  auto config = Config::fromEnv();
  if (config.isOk() && !algo.empty()) config.value().algo = algo;
  std::vector<RankResult> results(static_cast<size_t>(n));
  std::vector<std::thread> threads;
  for (int r = 0; r < n; ++r) {
    threads.emplace_back([&, r] {
      RankResult& out = results[static_cast<size_t>(r)];
      out.rank = r;
      if (!config.isOk()) return void(out.error = config.status().message());
      myrComm_t comm = nullptr;
      myrResult_t rc = commInitFromStore(&comm, n, r, store, config.value());
      if (rc != myrSuccess) return void(out.error = std::string("init failed: ") + myrGetLastError(nullptr));
      out.error = body(r, comm);
      myrCommDestroy(comm);
    });
  }
  for (auto& t : threads) t.join();
  return results;
}

}  // namespace myriad::test
