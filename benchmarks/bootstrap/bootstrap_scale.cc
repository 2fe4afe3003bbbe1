// myriad_bootstrap_bench: how the exchange of peer descriptions at init grows with the number of ranks, ranks
// as threads of this process over a memory store that counts the bytes it serves. Two schemes, side by side:
//   table  (the bootstrap before): every rank sets its description, rank 0 gets them all and sets
//          the table, every other rank gets the table: O(n^2) bytes through the store's host;
//   bruck  (core/bootstrap_allgather.h, today's): the store carries each rank's address; the descriptions
//          move among the ranks in ceil(log2 n) rounds of Bruck's all-gather.
// Descriptions are real PeerInfo encodings (addresses filled in). Prints one row per (scheme, n): wall time of
// the exchange, bytes set into and read from the store, and the bytes of descriptions each rank ends with.
//   myriad_bootstrap_bench [N ...]        (default 2 4 8 ... 1024)
#include <sys/resource.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "base/auth.h"
#include "base/wire.h"
#include "core/bootstrap_allgather.h"
#include "rendezvous/peer_info.h"
#include "rendezvous/store.h"

using namespace myriad;

namespace {

// A store that counts the bytes of the values set into it and read from it (what its host serves).
class CountingStore final : public Store {
 public:
  Status set(const std::string& key, const Bytes& value) override {
    in_ += value.size();
    return inner_.set(key, value);
  }
  Result<Bytes> get(const std::string& key, int timeoutMs, const std::atomic<bool>* abort) override {
    auto r = inner_.get(key, timeoutMs, abort);
    if (r.isOk()) out_ += r.value().size();
    return r;
  }
  Result<Bytes> tryGet(const std::string& key) override {
    auto r = inner_.tryGet(key);
    if (r.isOk()) out_ += r.value().size();
    return r;
  }
  std::string describe() const override { return "counting memory store"; }
  uint64_t in() const { return in_; }
  uint64_t out() const { return out_; }

 private:
  MemoryStore inner_;
  std::atomic<uint64_t> in_{0}, out_{0};
};

Bytes description(int rank, int nranks) {
  PeerInfo p;
  p.rank = rank;
  p.pid = 100000 + rank;
  p.hostname = "node" + std::to_string(rank / 8);
  p.hostId = "5f0c7a9e-1d2b-4c3a-9e8f-0a1b2c3d4e5f/" + p.hostname + "/net:4026531840";
  p.tcpAddr =
      SockAddr::parse("10.0." + std::to_string(rank / 250 % 250) + "." + std::to_string(rank % 250) + ":41000").value();
  p.livenessAddr = p.tcpAddr;
  Writer w;
  p.encode(w);
  // What Comm::bootstrap sends: nranks, then the description.
  Bytes out(4 + w.bytes().size());
  const int32_t n = nranks;
  std::memcpy(out.data(), &n, 4);
  std::memcpy(out.data() + 4, w.bytes().data(), w.bytes().size());
  return out;
}

// The previous bootstrap: rank 0 gathers the descriptions and publishes the table.
Status tableExchange(Store& store, int rank, int n, const Bytes& mine, size_t* held) {
  MYR_TRY(store.set("peer." + std::to_string(rank), mine));
  Bytes table;
  if (rank == 0) {
    for (int r = 0; r < n; ++r) {
      MYR_ASSIGN_OR_RETURN(Bytes b, store.get("peer." + std::to_string(r), 60000, nullptr));
      const size_t at = table.size();
      table.resize(at + b.size());
      if (!b.empty()) std::memcpy(table.data() + at, b.data(), b.size());
    }
    MYR_TRY(store.set("peers", table));
  } else {
    MYR_ASSIGN_OR_RETURN(table, store.get("peers", 60000, nullptr));
  }
  *held = table.size();
  return Status::ok();
}

struct Row {
  double ms = 0;
  uint64_t in = 0, out = 0;
  size_t held = 0;
  std::string error;
};

Row run(bool ring, int n) {
  CountingStore store;
  std::vector<std::thread> threads;
  std::vector<size_t> held(static_cast<size_t>(n), 0);
  std::mutex m;
  std::string error;
  const auto t0 = std::chrono::steady_clock::now();
  for (int r = 0; r < n; ++r) {
    threads.emplace_back([&, r] {
      const Bytes mine = description(r, n);
      Status s;
      if (ring) {
        BootstrapExchange x;
        x.store = &store, x.rank = r, x.nranks = n, x.ifname = "lo", x.timeoutMs = 600000;
        x.key = auth::deriveKey(reinterpret_cast<const uint8_t*>("bench"), 5, "myriad bootstrap hello v1 bench");
        auto all = bootstrapAllGather(x, mine);
        if (all.isOk())
          for (const Bytes& b : all.value()) held[static_cast<size_t>(r)] += b.size();
        s = all.status();
      } else {
        s = tableExchange(store, r, n, mine, &held[static_cast<size_t>(r)]);
      }
      if (!s.isOk()) {
        std::lock_guard<std::mutex> lock(m);
        if (error.empty()) error = "rank " + std::to_string(r) + ": " + s.toString();
      }
    });
  }
  for (auto& t : threads) t.join();
  Row row;
  row.ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  row.in = store.in(), row.out = store.out();
  row.held = *std::max_element(held.begin(), held.end());
  row.error = error;
  return row;
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<int> sizes;
  for (int i = 1; i < argc; ++i) sizes.push_back(std::atoi(argv[i]));
  if (sizes.empty())
    for (int n = 2; n <= 1024; n *= 2) sizes.push_back(n);
  // 1 + 2 ceil(log2 n) sockets per rank, all in this process: as many descriptors as the system lets us have.
  rlimit fds{};
  if (getrlimit(RLIMIT_NOFILE, &fds) == 0) {
    rlimit more{1 << 20, 1 << 20};
    if (setrlimit(RLIMIT_NOFILE, &more) != 0 && fds.rlim_cur < fds.rlim_max) {
      fds.rlim_cur = fds.rlim_max;
      setrlimit(RLIMIT_NOFILE, &fds);
    }
  }
  std::printf("# peer-description exchange at init, ranks as threads (%zu-byte descriptions)\n",
              description(0, 2).size());
  std::printf("%7s  %-5s  %10s  %14s  %14s  %14s\n", "ranks", "kind", "wall ms", "store in B", "store out B",
              "held/rank B");
  for (int n : sizes) {
    if (n < 1) continue;
    for (bool ring : {false, true}) {
      Row r = run(ring, n);
      if (!r.error.empty()) {
        std::fprintf(stderr, "myriad_bootstrap_bench: %d ranks, %s: %s\n", n, ring ? "bruck" : "table",
                     r.error.c_str());
        return 1;
      }
      std::printf("%7d  %-5s  %10.1f  %14llu  %14llu  %14zu\n", n, ring ? "bruck" : "table", r.ms,
                  static_cast<unsigned long long>(r.in), static_cast<unsigned long long>(r.out), r.held);
      std::fflush(stdout);
    }
  }
  return 0;
}
