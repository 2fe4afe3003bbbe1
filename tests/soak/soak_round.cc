// A soak round: the draw (a small splitmix generator, so a seed replays the same round on any machine with
// this binary) and the ranks' body. Each case is one of collCases() for the round's collectives, half the
// time with a random count (log-uniform up to the large counts of collCases) and root, blocking or on the
// host stream, checked against the host reference by runCollCase. Every registered algorithm accepts every
// call (their supports() says so), so a forced one that refuses a call is a failure like any other.
#include "tests/soak/soak_round.h"

#include <malloc.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>

#include "dispatch/registry.h"
#include "tests/common/dtype_values.h"
#include "tests/common/fork_ranks.h"
#include "tests/common/mp_helpers.h"
#include "tests/common/reference.h"

namespace myriad::test {
namespace {

constexpr int kBatch = 8;  // cases between two agreements on whether time is up

struct Rng {
  uint64_t state;
  uint64_t next() { return soakMix(state += 0x9e3779b97f4a7c15ULL); }
  size_t below(size_t k) { return k == 0 ? 0 : static_cast<size_t>(next() % k); }
};

const std::vector<Coll>& allColls() {
  static const std::vector<Coll> all = {Coll::kAllReduce,     Coll::kBroadcast, Coll::kReduce,    Coll::kAllGather,
                                        Coll::kReduceScatter, Coll::kAllToAll,  Coll::kAllToAllv, Coll::kGather,
                                        Coll::kScatter,       Coll::kBarrier};
  return all;
}

// The collectives a forced algorithm runs: its registry prefix (all-to-allv runs on the all-to-all ones).
std::vector<Coll> collsOfAlgorithm(const std::string& prefix) {
  std::vector<Coll> out;
  for (Coll c : allColls()) {
    if (prefix == collName(c) || (prefix == "alltoall" && c == Coll::kAllToAllv)) out.push_back(c);
  }
  return out;
}

bool isRooted(Coll c) {
  return c == Coll::kBroadcast || c == Coll::kReduce || c == Coll::kGather || c == Coll::kScatter;
}

// Bytes the call delivered into this rank's receive buffer.
uint64_t payloadBytes(const CollCase& c, int rank, int n, uint64_t salt) {
  const uint64_t block = c.count * dataTypeSize(c.type), un = static_cast<uint64_t>(n);
  switch (c.coll) {
    case Coll::kAllReduce:
    case Coll::kBroadcast:
    case Coll::kReduceScatter:
    case Coll::kScatter: return block;
    case Coll::kReduce: return rank == c.root ? block : 0;
    case Coll::kGather: return rank == c.root ? block * un : 0;
    case Coll::kAllGather:
    case Coll::kAllToAll: return block * un;
    case Coll::kAllToAllv: {
      const AllToAllvLayout L = allToAllvLayout(n, c.count, c.inPlace, salt);
      uint64_t total = 0;
      for (int s = 0; s < n; ++s) total += L.counts[static_cast<size_t>(s * n + rank)];
      return total * dataTypeSize(c.type);
    }
    case Coll::kBarrier: return 0;
  }
  return 0;
}

// A grouped ring shift: count floats to rank + 1, from rank - 1, checked with guard bytes past the end.
std::string sendRecvRing(myrComm_t comm, int rank, int n, size_t count, myrStream_t stream, uint64_t salt) {
  const size_t bytes = count * sizeof(float);
  const int next = (rank + 1) % n, prev = (rank + n - 1) % n;
  std::vector<unsigned char> send(bytes), recv(bytes + 64, 0xA5), want(bytes + 64, 0xA5);
  fillPattern(send.data(), bytes, rank, 0, salt);
  fillPattern(want.data(), bytes, prev, 0, salt);
  const std::string where = "sendrecv ring float count " + std::to_string(count) + " (rank " + std::to_string(rank) +
                            " of " + std::to_string(n) + ", salt " + std::to_string(salt) + "): ";
  myrResult_t res = myrGroupStart();
  if (res == myrSuccess) res = myrSend(send.data(), count, myrFloat32, next, comm, stream);
  if (res == myrSuccess) res = myrRecv(recv.data(), count, myrFloat32, prev, comm, stream);
  const myrResult_t end = myrGroupEnd();
  if (res != myrSuccess || end != myrSuccess)
    return where + resultText("myrSend/myrRecv/myrGroupEnd", res != myrSuccess ? res : end, comm);
  const std::string err = syncStream(stream, comm);
  if (!err.empty()) return where + err;
  for (size_t i = 0; i < want.size(); ++i) {
    if (recv[i] != want[i])
      return where + "recvbuff byte " + std::to_string(i) + " is " + std::to_string(recv[i]) + ", want " +
             std::to_string(want[i]) + (i >= bytes ? " (past the end)" : "");
  }
  return "";
}

size_t maxLogCount(Coll c) {
  return c == Coll::kAllToAll || c == Coll::kAllToAllv ? 15 : 17;
}

// Half the cases keep collCases' count and root; the others get a random count (log-uniform, below
// 1.5 << maxLogCount) and root.
CollCase randomize(CollCase c, int n, Rng& rng) {
  if (c.coll == Coll::kBarrier || rng.below(2) == 0) return c;
  const size_t top = size_t{1} << rng.below(maxLogCount(c.coll) + 1);
  c.count = top / 2 + rng.below(top);
  if (isRooted(c.coll)) c.root = static_cast<int>(rng.below(static_cast<size_t>(n)));
  return c;
}

// The largest call randomize() can make of each of the round's collectives (8-byte elements), out of place
// blocking and in place on the stream: what the library keeps by high-water mark (scratch, staging) is in
// place before the RSS baseline, so that growth after it means memory that is not given back.
std::vector<std::pair<CollCase, bool>> warmUpCases(const SoakDraw& d) {
  std::vector<std::pair<CollCase, bool>> out;
  for (Coll c : d.colls) {
    const size_t count = c == Coll::kBarrier ? 0 : (size_t{3} << maxLogCount(c)) / 2 - 1;
    out.push_back({{c, myrFloat64, myrSum, count, 0, false}, false});
    out.push_back({{c, myrFloat64, myrSum, count, 0, true}, true});
  }
  return out;
}

void setEnvironment(const SoakDraw& d, int rank) {
  useTransport(d.tcp ? Transport::kTcp : d.cma ? Transport::kShmCma : Transport::kShm);
  setenv("MYRIAD_NET_PATHS", std::to_string(d.netPaths).c_str(), 1);
  useHosts(rank, d.nranks, d.nhosts);
  forceAlgorithms(d.algo);
}

// All ranks agree whether to stop: the maximum of each rank's "my time is up".
std::string timeIsUp(myrComm_t comm, bool mine, bool* up) {
  int32_t flag = mine ? 1 : 0, all = 0;
  const myrResult_t res = myrAllReduce(&flag, &all, 1, myrInt32, myrMax, comm, nullptr);
  if (res != myrSuccess) return "the agreement on stopping: " + resultText("myrAllReduce", res, comm);
  *up = all != 0;
  return "";
}

std::string soakCalls(const SoakDraw& d, int rank, myrComm_t comm, myrStream_t stream, SoakRankStats* st) {
  std::vector<CollCase> pool;
  for (Coll c : d.colls) {
    for (const CollCase& k : collCases(c, d.nranks)) pool.push_back(k);
  }
  Rng rng{d.seed ^ 0x5eed5eedULL};
  for (const auto& [c, onStream] : warmUpCases(d)) {
    std::string err = runCollCase(comm, rank, d.nranks, c, onStream ? stream : nullptr, d.seed + st->calls);
    if (!err.empty()) return "warm-up call " + std::to_string(st->calls) + ": " + err;
    st->bytes += payloadBytes(c, rank, d.nranks, d.seed + st->calls);
    ++st->calls;
  }
  if (d.sendRecv) {
    for (myrStream_t s : {stream, static_cast<myrStream_t>(nullptr)}) {
      std::string err = sendRecvRing(comm, rank, d.nranks, (size_t{1} << 17) - 1, s, d.seed + st->calls);
      if (!err.empty()) return "warm-up call " + std::to_string(st->calls) + ": " + err;
      st->bytes += ((size_t{1} << 17) - 1) * sizeof(float);
      ++st->calls;
    }
  }
  // The round's time counts from here: the warm-up takes seconds of its own on a loaded machine.
  const auto t0 = std::chrono::steady_clock::now();
  auto elapsed = [&] { return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(); };
  bool baseline = false;
  for (bool up = false; !up;) {
    for (int b = 0; b < kBatch; ++b) {
      const uint64_t salt = d.seed + st->calls;
      const size_t pick = rng.below(pool.size() + (d.sendRecv ? 1 : 0));
      myrStream_t s = rng.below(2) == 0 ? stream : nullptr;
      std::string err;
      if (pick == pool.size()) {
        const size_t count = rng.below(size_t{1} << rng.below(18));
        err = sendRecvRing(comm, rank, d.nranks, count, s, salt);
        st->bytes += count * sizeof(float);
      } else {
        const CollCase c = randomize(pool[pick], d.nranks, rng);
        err = runCollCase(comm, rank, d.nranks, c, s, salt);
        st->bytes += payloadBytes(c, rank, d.nranks, salt);
      }
      if (!err.empty())
        return "call " + std::to_string(st->calls) + (s ? " (host stream)" : " (blocking)") + ": " + err;
      ++st->calls;
    }
    if (!baseline && elapsed() >= 0.2 * d.seconds) {
      st->rssStartKib = residentKib();
      baseline = true;
    }
    std::string err = timeIsUp(comm, elapsed() >= d.seconds, &up);
    if (!err.empty()) return err;
  }
  if (!baseline) st->rssStartKib = residentKib();
  st->rssEndKib = residentKib();
  return "";
}

}  // namespace

uint64_t soakMix(uint64_t x) {
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

std::string SoakDraw::transport() const {
  const std::string paths = "/paths" + std::to_string(netPaths);
  if (nhosts > 1) return "hosts" + std::to_string(nhosts) + paths;
  if (tcp) return "tcp" + paths;
  return cma ? "shm_cma" : "shm";
}

std::string SoakDraw::describe() const {
  return std::to_string(nranks) + " ranks, " + transport() + ", " + (algo.empty() ? "tuner" : algo);
}

SoakDraw drawRound(uint64_t runSeed, int round, double seconds) {
  SoakDraw d;
  d.round = round;
  d.seed = soakMix(runSeed * 0x100000001b3ULL + static_cast<uint64_t>(round) + 1);
  d.seconds = seconds;
  Rng rng{d.seed};
  d.nranks = 2 + static_cast<int>(rng.below(5));
  d.netPaths = rng.below(2) == 0 ? 1 : 4;
  switch (rng.below(5)) {
    case 0:
    case 1: break;  // shm
    case 2: d.cma = true; break;
    case 3: d.tcp = true; break;
    case 4: d.nhosts = 2 + static_cast<int>(rng.below(static_cast<size_t>(std::min(d.nranks, 3) - 1))); break;
  }
  if (rng.below(2) == 0) {
    d.colls = allColls();
    d.sendRecv = true;
    return d;
  }
  const auto all = allAlgorithms();
  const Algorithm* a = all[rng.below(all.size())];
  d.algo = a->name();
  const std::string prefix = d.algo.substr(0, d.algo.find('.'));
  d.colls = collsOfAlgorithm(prefix);
  d.sendRecv = prefix == "sendrecv";
  return d;
}

std::string formatStats(const SoakRankStats& s) {
  char text[160];
  std::snprintf(text, sizeof(text), "soak-stats calls %llu bytes %llu rss-start-kib %ld rss-end-kib %ld",
                static_cast<unsigned long long>(s.calls), static_cast<unsigned long long>(s.bytes), s.rssStartKib,
                s.rssEndKib);
  return text;
}

bool parseStats(const std::string& report, SoakRankStats* s) {
  const size_t at = report.find("soak-stats ");
  if (at == std::string::npos) return false;
  unsigned long long calls = 0, bytes = 0;
  if (std::sscanf(report.c_str() + at, "soak-stats calls %llu bytes %llu rss-start-kib %ld rss-end-kib %ld", &calls,
                  &bytes, &s->rssStartKib, &s->rssEndKib) != 4)
    return false;
  s->calls = calls;
  s->bytes = bytes;
  return true;
}

long residentKib() {
  malloc_trim(0);
  std::ifstream statm("/proc/self/statm");
  long size = 0, resident = 0;
  if (!(statm >> size >> resident)) return -1;
  return resident * (sysconf(_SC_PAGESIZE) / 1024);
}

int soakRank(const SoakDraw& d, int rank, const myrUniqueId& id, double rssBoundMib) {
  setEnvironment(d, rank);
  SoakRankStats st;
  const int code = runInChild(d.nranks, rank, id, true, [&](myrComm_t comm, myrStream_t stream) {
    std::string err = soakCalls(d, rank, comm, stream, &st);
    if (!err.empty()) return err;
    const double growthMib = static_cast<double>(st.rssEndKib - st.rssStartKib) / 1024.0;
    if (growthMib > rssBoundMib) {
      char text[200];
      std::snprintf(text, sizeof(text),
                    "resident memory grew by %.1f MiB (from %.1f to %.1f MiB) over %llu calls, "
                    "more than the bound of %.1f MiB",
                    growthMib, st.rssStartKib / 1024.0, st.rssEndKib / 1024.0,
                    static_cast<unsigned long long>(st.calls), rssBoundMib);
      return std::string(text);
    }
    return std::string();
  });
  childReport(formatStats(st));
  return code;
}

}  // namespace myriad::test
