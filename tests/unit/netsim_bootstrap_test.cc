// myriad-sim's model of the bootstrap (tools/sim/bootstrap_model.h) against the library's own exchange
// (core/bootstrap_allgather.h) run here as threads over a store that counts what it serves, and its plan of
// connections and rounds against Bruck's arithmetic.
#include <gtest/gtest.h>

#include <atomic>
#include <mutex>
#include <numeric>
#include <string>
#include <thread>
#include <vector>

#include "core/bootstrap_allgather.h"
#include "rendezvous/store.h"
#include "tools/sim/bootstrap_model.h"
#include "tools/sim/fabric.h"
#include "tools/sim/virtual_executor.h"

namespace myriad::netsim {
namespace {

// A memory store that counts the requests on the exchange's addresses ("boot.<rank>"), the keys of its
// wait-alls and the bytes they move. Not counted: reads of the abort notice ("boot.abort", polled only by a
// rank kept waiting over 100 ms for its peers' hellos), which the model prices apart.
class CountingStore final : public Store {
 public:
  Status set(const std::string& key, const Bytes& value) override {
    if (ours(key)) ++sets_, in_ += value.size();
    return inner_.set(key, value);
  }
  Result<Bytes> get(const std::string& key, int timeoutMs, const std::atomic<bool>* abort) override {
    auto got = inner_.get(key, timeoutMs, abort);
    if (ours(key) && got.isOk()) ++gets_, out_ += got.value().size();
    return got;
  }
  Result<Bytes> tryGet(const std::string& key) override {
    auto got = inner_.tryGet(key);
    if (ours(key)) ++tries_, out_ += got.isOk() ? got.value().size() : 0;
    return got;
  }
  Result<WaitAll> waitAll(const std::vector<std::string>& keys, const std::string& stopKey, int timeoutMs,
                          const std::atomic<bool>* abort) override {
    auto got = inner_.waitAll(keys, stopKey, timeoutMs, abort);  // the memory store's own gets: not counted
    ++waits_, waitKeys_ += keys.size();
    if (got.isOk())
      for (const Bytes& v : got.value().values) out_ += v.size();
    return got;
  }
  std::string describe() const override { return "counting store"; }
  std::atomic<uint64_t> sets_{0}, gets_{0}, tries_{0}, waits_{0}, waitKeys_{0}, in_{0}, out_{0};

 private:
  static bool ours(const std::string& key) { return key.rfind("boot.", 0) == 0 && key != "boot.abort"; }
  MemoryStore inner_;
};

// The library's exchange among n threads: each rank's request counts and bytes match the model's closed
// forms (the address's size as this machine writes it), and every rank ends holding what the model says.
TEST(NetsimBootstrap, StoreCountsAreTheLibrarysOwn) {
  for (int n : {2, 5, 12}) {
    SCOPED_TRACE(std::to_string(n) + " ranks");
    CountingStore store;
    std::vector<uint64_t> held(static_cast<size_t>(n), 0);
    std::vector<std::string> errors(static_cast<size_t>(n));
    const Bytes description(366, 0x5a);
    std::vector<std::thread> threads;
    for (int r = 0; r < n; ++r)
      threads.emplace_back([&, r] {
        BootstrapExchange x;
        x.store = &store, x.rank = r, x.nranks = n, x.ifname = "lo", x.timeoutMs = 60000;
        x.key[0] = 3;
        auto all = bootstrapAllGather(x, description);
        if (!all.isOk()) {
          errors[static_cast<size_t>(r)] = all.status().toString();
          return;
        }
        for (const Bytes& b : all.value()) held[static_cast<size_t>(r)] += b.size();
      });
    for (auto& t : threads) t.join();
    for (int r = 0; r < n; ++r) ASSERT_EQ(errors[static_cast<size_t>(r)], "") << "rank " << r;
    ASSERT_GT(store.sets_.load(), 0u);
    BootstrapSpec spec;
    spec.nranks = n, spec.descriptionBytes = 366;
    spec.addressBytes = static_cast<double>(store.in_.load()) / static_cast<double>(store.sets_.load());
    auto model = bootstrapModel(spec);
    ASSERT_TRUE(model.isOk()) << model.status().toString();
    const BootstrapModel& m = model.value();
    EXPECT_EQ(store.sets_.load() + store.gets_.load() + store.tries_.load() + store.waits_.load(), m.storeRequests);
    EXPECT_EQ(store.waits_.load(), static_cast<uint64_t>(n)) << "one wait-all per rank";
    EXPECT_EQ(store.waitKeys_.load(), m.storeWaitKeys);
    EXPECT_EQ(store.in_.load(), m.storeBytesIn);
    EXPECT_EQ(store.out_.load(), m.storeBytesOut);
    for (int r = 0; r < n; ++r) EXPECT_EQ(held[static_cast<size_t>(r)], m.heldPerRank) << "rank " << r;
  }
}

// The exchange's plan over a fabric, one rank per host: each rank sends six messages per round (the TCP
// handshake's and the hello's, as opener and as accepter, and the round's descriptions), and the NICs
// deliver to each rank every other rank's description once (Bruck: sum over rounds of min(2^k, n - 2^k) is
// n - 1) plus the hellos' bytes.
TEST(NetsimBootstrap, TheExchangeDeliversEveryDescriptionOnce) {
  for (int n : {2, 3, 12, 16, 100}) {
    SCOPED_TRACE(std::to_string(n) + " ranks");
    BootstrapSpec spec;
    spec.nranks = n;
    auto model = bootstrapModel(spec);
    ASSERT_TRUE(model.isOk()) << model.status().toString();
    const BootstrapModel& m = model.value();
    int rounds = 0;
    while ((1 << rounds) < n) ++rounds;
    ASSERT_EQ(m.rounds, rounds);
    FabricSpec fs;
    fs.nranks = n, fs.ranksPerHost = 1, fs.hostsPerLeaf = 4, fs.spines = 2;
    auto fabric = Fabric::make(fs);
    ASSERT_TRUE(fabric.isOk());
    VirtualExecutor exec(fabric.value(), 1);
    auto run = exec.run(m.plans);
    ASSERT_TRUE(run.isOk()) << run.status().toString();
    EXPECT_EQ(run.value().messages, static_cast<uint64_t>(n) * static_cast<uint64_t>(rounds) * 6);
    double delivered = 0;
    const auto& links = fabric.value().links();
    for (size_t l = 0; l < links.size(); ++l)
      if (links[l].kind == LinkKind::kNicDown) delivered += run.value().linkBytes[l];
    const double hellos = 36 + 56 + 32;
    EXPECT_NEAR(delivered, n * ((n - 1) * spec.descriptionBytes + rounds * hellos), 1e-6 * delivered);
    EXPECT_GT(run.value().seconds, 0);
  }
}

TEST(NetsimBootstrap, BadSpecsAreRefused) {
  BootstrapSpec spec;
  spec.nranks = 0;
  EXPECT_FALSE(bootstrapModel(spec).isOk());
  spec.nranks = 4, spec.storeOpUs = -1;
  auto bad = bootstrapModel(spec);
  ASSERT_FALSE(bad.isOk());
  EXPECT_NE(bad.status().message().find("non-negative"), std::string::npos) << bad.status().message();
  spec.storeOpUs = 1, spec.storeKeyUs = -0.5;
  EXPECT_FALSE(bootstrapModel(spec).isOk());
}

}  // namespace
}  // namespace myriad::netsim
