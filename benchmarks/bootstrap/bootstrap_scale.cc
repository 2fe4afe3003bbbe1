// myriad_bootstrap_bench: how the exchange of peer descriptions at init grows with the number of ranks, ranks
// as threads of this process over a memory store that counts the bytes it serves. Two schemes, side by side:
//   table  (the bootstrap before): every rank sets its description, rank 0 gets them all and sets
//          the table, every other rank gets the table: O(n^2) bytes through the store's host;
//   bruck  (core/bootstrap_allgather.h, today's): the store carries each rank's address; the descriptions
//          move among the ranks in ceil(log2 n) rounds of Bruck's all-gather.
// Descriptions are real PeerInfo encodings (addresses filled in). Prints one row per (scheme, n): wall time of
// the exchange, bytes set into and read from the store, and the bytes of descriptions each rank ends with.
//   myriad_bootstrap_bench [N ...]                (default 2 4 8 ... 1024)
//   myriad_bootstrap_bench --procs P [N ...]      Bruck only, the ranks as threads of P forked processes over
//                                                 the real TCP store (its server in this process, a client
//                                                 and its authenticated hello per rank, as in a job): one
//                                                 process's descriptors hold ~900 ranks; P of them hold P times
//                                                 as many. Adds the largest resident memory of a process over
//                                                 its ranks.
//   myriad_bootstrap_bench --store-cost           the root's CPU per client hello, per get and per key of a
//                                                 wait-all, the constants of myriad-sim --bootstrap (its model
//                                                 of init at scale).
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

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
#include "rendezvous/tcp_store.h"
#include "rendezvous/unique_id.h"

using namespace myriad;

namespace {

// A store that counts the bytes of the values set into it and read from it (what its host serves): over
// memory, or in front of a TCP store client (then each rank counts its own, and the sum is the server's).
class CountingStore final : public Store {
 public:
  CountingStore() : own_(std::make_unique<MemoryStore>()), inner_(*own_) {}
  explicit CountingStore(std::unique_ptr<Store> inner) : own_(std::move(inner)), inner_(*own_) {}
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
  std::string describe() const override { return "counting " + inner_.describe(); }
  uint64_t in() const { return in_; }
  uint64_t out() const { return out_; }

 private:
  std::unique_ptr<Store> own_;
  Store& inner_;
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

// This process's CPU time so far, µs (user and system, all its threads).
double processCpuUs() {
  rusage ru{};
  getrusage(RUSAGE_SELF, &ru);
  return static_cast<double>(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1e6 +
         static_cast<double>(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec);
}

// What a forked group of ranks reports to the parent through its pipe.
struct GroupReport {
  uint64_t in = 0, out = 0, held = 0;
  long maxRssKb = 0;
  char error[256] = "";
};

// Ranks [first, first + count) of n as threads of this (forked) process, each with its own TCP store client.
GroupReport runGroup(const SockAddr& root, const Secret& secret, int first, int count, int n) {
  std::vector<std::thread> threads;
  std::atomic<uint64_t> in{0}, out{0}, held{0};
  std::mutex m;
  GroupReport rep;
  for (int r = first; r < first + count; ++r) {
    threads.emplace_back([&, r] {
      CountingStore store(std::make_unique<TcpStore>(root, secret, 600000));
      BootstrapExchange x;
      x.store = &store, x.rank = r, x.nranks = n, x.ifname = "lo", x.timeoutMs = 600000;
      x.key = auth::deriveKey(secret.data(), secret.size(), "myriad bootstrap hello v1 bench");
      auto all = bootstrapAllGather(x, description(r, n));
      uint64_t mine = 0;
      if (all.isOk()) {
        for (int p = 0; p < n && all.isOk(); ++p)  // every rank's description, each where it belongs
          if (all.value()[static_cast<size_t>(p)] != description(p, n))
            all = Status(Code::kInternalError, "the description of rank " + std::to_string(p) + " is wrong");
        if (all.isOk())
          for (const Bytes& b : all.value()) mine += b.size();
      }
      uint64_t seen = held.load();
      while (mine > seen && !held.compare_exchange_weak(seen, mine)) {
      }
      in += store.in(), out += store.out();
      if (!all.isOk()) {
        std::lock_guard<std::mutex> lock(m);
        if (!rep.error[0])
          std::snprintf(rep.error, sizeof rep.error, "rank %d: %s", r, all.status().toString().c_str());
      }
    });
  }
  for (auto& t : threads) t.join();
  rep.in = in, rep.out = out, rep.held = held;
  rusage ru{};
  getrusage(RUSAGE_SELF, &ru);
  rep.maxRssKb = ru.ru_maxrss;
  return rep;
}

// n ranks in `procs` forked groups over a TCP store served here. Returns false (and says why) on a failure.
bool runForked(int n, int procs) {
  SockAddr root = SockAddr::parse("127.0.0.1:0").value();
  const Secret secret = randomSecret();
  Status s = startTcpStoreServer(&root, secret);
  if (!s.isOk()) {
    std::fprintf(stderr, "myriad_bootstrap_bench: store: %s\n", s.toString().c_str());
    return false;
  }
  procs = std::min(procs, n);
  struct Kid {
    pid_t pid;
    int fd, first, last;  // its pipe, and its ranks [first, last)
  };
  std::vector<Kid> kids;
  const auto t0 = std::chrono::steady_clock::now();
  const double cpu0 = processCpuUs();  // the store's server is this process's only busy thread
  for (int g = 0; g < procs; ++g) {
    const int first = static_cast<int>(static_cast<long long>(n) * g / procs);
    const int last = static_cast<int>(static_cast<long long>(n) * (g + 1) / procs);
    int fd[2];
    if (pipe(fd) != 0) return false;
    const pid_t pid = fork();
    if (pid == 0) {
      close(fd[0]);
      // Below the store's server in priority: thousands of rank threads on a few cores would otherwise starve
      // its one thread, and hellos time out by the thousand (on a cluster the root has CPUs of its own).
      setpriority(PRIO_PROCESS, 0, 10);
      GroupReport rep = runGroup(root, secret, first, last - first, n);
      const bool ok = write(fd[1], &rep, sizeof rep) == static_cast<ssize_t>(sizeof rep);
      _exit(ok && !rep.error[0] ? 0 : 1);
    }
    close(fd[1]);
    kids.push_back({pid, fd[0], first, last});
  }
  GroupReport sum;
  long worstRssPerRankKb = 0;
  bool ok = true;
  for (size_t g = 0; g < kids.size(); ++g) {
    GroupReport rep;
    const bool got = read(kids[g].fd, &rep, sizeof rep) == static_cast<ssize_t>(sizeof rep);
    close(kids[g].fd);
    int status = 0;
    waitpid(kids[g].pid, &status, 0);
    if (!got || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
      std::fprintf(stderr, "myriad_bootstrap_bench: %d ranks, group %zu: %s\n", n, g,
                   got && rep.error[0] ? rep.error : "exited without a report");
      ok = false;
      continue;
    }
    sum.in += rep.in, sum.out += rep.out, sum.held = std::max(sum.held, rep.held);
    worstRssPerRankKb = std::max(worstRssPerRankKb, rep.maxRssKb / std::max(1, kids[g].last - kids[g].first));
  }
  const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  if (!ok) return false;
  const double rootCpuMs = (processCpuUs() - cpu0) / 1e3;
  std::printf("%7d  %-5s  %10.1f  %14llu  %14llu  %14llu  %6d  %12ld  %11.1f\n", n, "bruck", ms,
              static_cast<unsigned long long>(sum.in), static_cast<unsigned long long>(sum.out),
              static_cast<unsigned long long>(sum.held), procs, worstRssPerRankKb, rootCpuMs);
  std::fflush(stdout);
  return true;
}

// The root's CPU per store client's hello and per request, for myriad-sim's model of the bootstrap at scale
// (--bootstrap): a TCP store served here; a forked child opens `clients` clients one after the other, each
// connecting with its hello and setting one key, then makes `gets` gets on one more client, and as many
// wait-alls of kWaitKeys keys (a rank's addresses at 131,072 ranks). The server's CPU is this process's (its
// only busy thread while the child runs), read before and after each part.
bool measureStoreCost(int clients, int gets) {
  constexpr int kWaitKeys = 17;
  SockAddr root = SockAddr::parse("127.0.0.1:0").value();
  const Secret secret = randomSecret();
  if (Status s = startTcpStoreServer(&root, secret); !s.isOk()) {
    std::fprintf(stderr, "myriad_bootstrap_bench: store: %s\n", s.toString().c_str());
    return false;
  }
  // One part in a child; returns its wall time per unit (µs) and this process's CPU per unit.
  // `waitKeys`: the requests are wait-alls of that many keys, not gets.
  auto part = [&](bool hellos, int units, int idle, int waitKeys, double* wallUs, double* cpuPerUnit) {
    int fd[2];
    if (pipe(fd) != 0) return false;
    const double before = processCpuUs();
    const pid_t pid = fork();
    if (pid == 0) {
      close(fd[0]);
      auto t0 = std::chrono::steady_clock::now();  // the gets are timed from after their setup
      bool ok = true;
      if (hellos) {
        for (int c = 0; c < units && ok; ++c) {
          TcpStore client(root, secret, 10000);
          ok = client.set("k." + std::to_string(c), Bytes(23, 1)).isOk();
        }
      } else {
        std::vector<std::unique_ptr<TcpStore>> others;  // connected and quiet, as waiting ranks are
        for (int c = 0; c < idle && ok; ++c) {
          others.push_back(std::make_unique<TcpStore>(root, secret, 10000));
          ok = others.back()->set("i." + std::to_string(c), Bytes(23, 1)).isOk();
        }
        TcpStore client(root, secret, 10000);
        std::vector<std::string> keys;
        for (int k = 0; k < waitKeys; ++k) keys.push_back("w." + std::to_string(k));
        for (const std::string& k : keys) ok = ok && client.set(k, Bytes(23, 1)).isOk();
        ok = ok && client.set("g", Bytes(23, 1)).isOk();
        t0 = std::chrono::steady_clock::now();
        for (int g = 0; g < units && ok; ++g)
          ok = waitKeys > 0 ? client.waitAll(keys, "abort", 1000, nullptr).isOk()
                            : client.get("g", 1000, nullptr).isOk();
      }
      const double us = std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count();
      ok = ok && write(fd[1], &us, sizeof us) == static_cast<ssize_t>(sizeof us);
      _exit(ok ? 0 : 1);
    }
    close(fd[1]);
    double us = 0;
    const bool got = read(fd[0], &us, sizeof us) == static_cast<ssize_t>(sizeof us);
    close(fd[0]);
    int status = 0;
    waitpid(pid, &status, 0);
    if (!got || !WIFEXITED(status) || WEXITSTATUS(status) != 0) return false;
    *wallUs = us / units, *cpuPerUnit = (processCpuUs() - before) / units;
    return true;
  };
  double helloWall = 0, helloCpu = 0, getWall = 0, getCpu = 0, crowdWall = 0, crowdCpu = 0, allWall = 0, allCpu = 0;
  constexpr int kIdle = 1000;
  if (!part(true, clients, 0, 0, &helloWall, &helloCpu) || !part(false, gets, 0, 0, &getWall, &getCpu) ||
      !part(false, gets, kIdle, 0, &crowdWall, &crowdCpu) || !part(false, gets, 0, kWaitKeys, &allWall, &allCpu)) {
    std::fprintf(stderr, "myriad_bootstrap_bench: --store-cost: a client failed\n");
    return false;
  }
  crowdCpu -= kIdle * helloCpu / gets;  // the idle clients' own hellos and sets
  std::printf("# the store's root, per request (%d clients each with a hello and a set; %d gets on one client)\n",
              clients, gets);
  std::printf(
      "root CPU per get: %.2f us; per client (connection, hello, one set): %.2f us; "
      "client wall per get: %.2f us, per client: %.2f us\n",
      getCpu, helloCpu, getWall, helloWall);
  std::printf("with %d more clients connected and quiet: root CPU per get %.2f us, client wall per get %.2f us\n",
              kIdle, crowdCpu, crowdWall);
  std::printf("root CPU per wait-all of %d keys: %.2f us, client wall %.2f us\n", kWaitKeys, allCpu, allWall);
  std::printf("myriad-sim --bootstrap --store-op-us %.1f --store-hello-us %.1f --store-key-us %.2f\n", getCpu,
              std::max(0.0, helloCpu - getCpu), std::max(0.0, (allCpu - getCpu) / kWaitKeys));
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<int> sizes;
  int procs = 0;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--store-cost") == 0) return measureStoreCost(2000, 20000) ? 0 : 1;
    if (std::strcmp(argv[i], "--procs") == 0 && i + 1 < argc) {
      procs = std::atoi(argv[++i]);
      if (procs < 1) {
        std::fprintf(stderr, "myriad_bootstrap_bench: --procs %s: not a process count\n", argv[i]);
        return 2;
      }
      continue;
    }
    sizes.push_back(std::atoi(argv[i]));
  }
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
  if (procs > 0) {
    std::printf(
        "# peer-description exchange at init, ranks as threads of %d forked processes over a TCP store "
        "(%zu-byte descriptions)\n",
        procs, description(0, 2).size());
    std::printf("%7s  %-5s  %10s  %14s  %14s  %14s  %6s  %12s  %11s\n", "ranks", "kind", "wall ms", "store in B",
                "store out B", "held/rank B", "procs", "rss/rank KiB", "root CPU ms");
    for (int n : sizes)
      if (n >= 1 && !runForked(n, procs)) return 1;
    return 0;
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
