// runRanks over a MemoryStore; every rank's communicator is created on its own thread.
#include "run_ranks.h"

#include <memory>
#include <thread>

#include "base/config.h"
#include "capi/internal.h"

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

namespace {

myrResult_t initRank(myrComm_t* comm, int n, int r, const std::shared_ptr<MemoryStore>& store, Config config,
                     const RunOptions& options) {
  if (!options.hostOf.empty()) config.hostId = "testhost" + std::to_string(options.hostOf[static_cast<size_t>(r)]);
  return commInitFromStore(comm, n, r, store, config);
}

}  // namespace

std::vector<RankResult> runRankPairs(int n, const PairBody& body, const RunOptions& options) {
  auto forcedStore = std::make_shared<MemoryStore>(), tunedStore = std::make_shared<MemoryStore>();
  auto config = Config::fromEnv();
  std::vector<RankResult> results(static_cast<size_t>(n));
  std::vector<std::thread> threads;
  for (int r = 0; r < n; ++r) {
    threads.emplace_back([&, r] {
      RankResult& out = results[static_cast<size_t>(r)];
      out.rank = r;
      if (!config.isOk()) return void(out.error = config.status().message());
      Config forcedConfig = config.value();
      if (options.chunkBytes) forcedConfig.chunkBytes = options.chunkBytes;
      Config tunedConfig = forcedConfig;
      forcedConfig.algo = options.algo;
      tunedConfig.algo.clear();
      myrComm_t forced = nullptr, tuned = nullptr;
      if (initRank(&forced, n, r, forcedStore, forcedConfig, options) != myrSuccess)
        return void(out.error = std::string("init failed: ") + myrGetLastError(nullptr));
      if (initRank(&tuned, n, r, tunedStore, tunedConfig, options) != myrSuccess) {
        out.error = std::string("init of the tuned communicator failed: ") + myrGetLastError(nullptr);
        return void(myrCommDestroy(forced));
      }
      out.error = body(r, forced, tuned);
      myrCommDestroy(tuned);
      myrCommDestroy(forced);
    });
  }
  for (auto& t : threads) t.join();
  return results;
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
      myrComm_t comm = nullptr;
      if (initRank(&comm, n, r, store, config.value(), options) != myrSuccess)
        return void(out.error = std::string("init failed: ") + myrGetLastError(nullptr));
      out.error = body(r, comm);
      myrCommDestroy(comm);
    });
  }
  for (auto& t : threads) t.join();
  return results;
}

}  // namespace myriad::test
