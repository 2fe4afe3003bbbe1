// runRanks over a MemoryStore; every rank's communicator is created on its own thread.
#include "run_ranks.h"

#include <memory>
#include <thread>

#include "capi/internal.h"
#include "core/config.h"

namespace myriad::test {

std::vector<int> blockedHosts(const std::vector<int>& sizes) {
  std::vector<int> out;
  for (size_t h = 0; h < sizes.size(); ++h) out.insert(out.end(), static_cast<size_t>(sizes[h]), static_cast<int>(h));
  return out;
}

std::vector<int> interleavedHosts(const std::vector<int>& sizes) {
  std::vector<int> left = sizes, out;
  for (bool any = true; any;) {
    any = false;
    for (size_t h = 0; h < left.size(); ++h)
      if (left[h] > 0) --left[h], out.push_back(static_cast<int>(h)), any = true;
  }
  return out;
}

std::vector<RankResult> runRanks(int n, const std::function<std::string(int, myrComm_t)>& body,
                                 const RunOptions& options) {
  auto store = std::make_shared<MemoryStore>();
  auto config = Config::fromEnv();
  if (config.isOk() && !options.algo.empty()) config.value().algo = options.algo;
  std::vector<RankResult> results(static_cast<size_t>(n));
  std::vector<std::thread> threads;
  for (int r = 0; r < n; ++r) {
    threads.emplace_back([&, r] {
      RankResult& out = results[static_cast<size_t>(r)];
      out.rank = r;
      if (!config.isOk()) return void(out.error = config.status().message());
      Config mine = config.value();
      if (!options.hostOf.empty()) mine.hostId = "testhost" + std::to_string(options.hostOf[static_cast<size_t>(r)]);
      myrComm_t comm = nullptr;
      myrResult_t rc = commInitFromStore(&comm, n, r, store, mine);
      if (rc != myrSuccess) return void(out.error = std::string("init failed: ") + myrGetLastError(nullptr));
      out.error = body(r, comm);
      myrCommDestroy(comm);
    });
  }
  for (auto& t : threads) t.join();
  return results;
}

}  // namespace myriad::test
