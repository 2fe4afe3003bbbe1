// Every algorithm forced once with MYRIAD_ALGO, over ranks that MYRIAD_HOST_ID splits into "hosts" on this
// machine (shm inside a host, tcp between), so the hierarchical algorithms really cross processes and
// transports: 2 + 2 ranks blocking, then on a host stream 3 + 2 ranks (2 + 2 + 2 for the hierarchical ones).
// The hierarchical ones also on hosts of different sizes: 3 + 3 + 1 (host stream), 2 + 2 + 1 and 4 + 1
// interleaved (blocking). Then the tuner's own choice (which every rank must make alike) and a list of every
// hierarchical algorithm, on even and uneven hosts.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "myriad/myriad.h"
#include "tests/common/coll_check.h"
#include "tests/common/fork_ranks.h"
#include "tests/common/mp_helpers.h"
#include "tests/common/reference.h"

namespace myriad::test {
namespace {

using namespace std::chrono_literals;

struct HierParam {
  std::string algo;  // MYRIAD_ALGO; "" leaves the choice to the tuner
  int nranks;
  int nhosts;
  bool hostStream;
  std::vector<int> hostOf;  // rank -> host; empty: hostOfRank's near-even blocked split
};

// Host of each rank: hosts[h] ranks on host h, numbered host by host, or dealt round-robin (interleaved).
HierParam uneven(const std::string& algo, const std::vector<int>& hosts, bool interleaved, bool hostStream) {
  HierParam p{algo, 0, static_cast<int>(hosts.size()), hostStream, {}};
  std::vector<int> left = hosts;
  for (bool any = true; any;) {
    any = false;
    for (size_t h = 0; h < left.size(); ++h) {
      int take = interleaved ? std::min(left[h], 1) : left[h];
      for (int k = 0; k < take; ++k) p.hostOf.push_back(static_cast<int>(h));
      left[h] -= take;
      any = any || take > 0;
    }
  }
  p.nranks = static_cast<int>(p.hostOf.size());
  return p;
}

int hostOf(const HierParam& p, int rank) {
  return p.hostOf.empty() ? hostOfRank(rank, p.nranks, p.nhosts) : p.hostOf[static_cast<size_t>(rank)];
}

// "3_3_1" or "4_1i" (interleaved): the ranks per host.
std::string layoutName(const HierParam& p) {
  std::vector<int> sizes(static_cast<size_t>(p.nhosts), 0);
  bool blocked = true;
  for (int r = 0; r < p.nranks; ++r) {
    ++sizes[static_cast<size_t>(hostOf(p, r))];
    if (r > 0 && hostOf(p, r) < hostOf(p, r - 1)) blocked = false;
  }
  std::string name;
  for (int s : sizes) name += (name.empty() ? "" : "_") + std::to_string(s);
  return blocked ? name : name + "i";
}

void PrintTo(const HierParam& p, std::ostream* os) {
  *os << "MYRIAD_ALGO=" << p.algo << " n=" << p.nranks << " hosts=" << layoutName(p)
      << (p.hostStream ? " host stream" : " blocking");
}

std::string hierName(const testing::TestParamInfo<HierParam>& info) {
  std::string name = info.param.algo.empty() ? "tuner" : info.param.algo;
  for (char& ch : name) ch = (ch == '.' || ch == ',') ? '_' : ch;
  if (name.size() > 40) name = "hier_list";
  name += "_n" + std::to_string(info.param.nranks) + "_h" + std::to_string(info.param.nhosts);
  if (!info.param.hostOf.empty()) name += "_" + layoutName(info.param);
  return name + (info.param.hostStream ? "_hoststream" : "_blocking");
}

const char* const kAlgorithms[] = {
    "allreduce.ring", "allreduce.tree",       "allreduce.halving_doubling", "allreduce.hier", "allgather.ring",
    "allgather.hier", "reducescatter.ring",   "reducescatter.hier",         "broadcast.ring", "broadcast.tree",
    "reduce.ring",    "reduce.tree",          "alltoall.pairwise",          "alltoall.hier",  "gather.linear",
    "scatter.linear", "barrier.dissemination"};
const char kHierList[] = "allreduce.hier,allgather.hier,reducescatter.hier,alltoall.hier";

bool isHier(const std::string& algo) {
  return algo.find(".hier") != std::string::npos;
}

// The collectives an algorithm name runs: its prefix (all-to-allv runs on the all-to-all algorithms);
// every collective for the tuner and for lists.
std::vector<Coll> collsOf(const std::string& algo) {
  const std::vector<Coll> all = {Coll::kAllReduce,     Coll::kBroadcast, Coll::kReduce,    Coll::kAllGather,
                                 Coll::kReduceScatter, Coll::kAllToAll,  Coll::kAllToAllv, Coll::kGather,
                                 Coll::kScatter,       Coll::kBarrier};
  const bool list = algo.empty() || algo.find(',') != std::string::npos;
  const std::string prefix = algo.substr(0, algo.find('.'));
  std::vector<Coll> out;
  for (Coll c : all) {
    if (list || prefix == collName(c) || (prefix == "alltoall" && c == Coll::kAllToAllv)) out.push_back(c);
  }
  return out;
}

class HierMp : public testing::TestWithParam<HierParam> {};

TEST_P(HierMp, MatchesReference) {
  const HierParam p = GetParam();
  const uint64_t seed = testSeed();
  const bool listOrTuner = collsOf(p.algo).size() > 2;
  std::vector<CollCase> cases;
  for (Coll c : collsOf(p.algo)) {
    for (const CollCase& k : collCases(c, p.nranks, listOrTuner)) cases.push_back(k);
  }
  auto body = [&](int rank, const myrUniqueId& id) -> int {
    useTransport(Transport::kShm);
    if (p.hostOf.empty()) {
      useHosts(rank, p.nranks, p.nhosts);
    } else {
      setenv("MYRIAD_HOST_ID", ("host" + std::to_string(hostOf(p, rank))).c_str(), 1);
    }
    forceAlgorithms(p.algo);
    return runInChild(p.nranks, rank, id, p.hostStream, [&](myrComm_t comm, myrStream_t stream) {
      std::string err = runCollCases(comm, rank, p.nranks, cases, stream, seed);
      if (err.empty()) return err;
      return "MYRIAD_ALGO=" + p.algo + " on host " + std::to_string(hostOf(p, rank)) + ": " + err;
    });
  };
  const ForkOutcome out = forkRanks(p.nranks, body, 120s, seed);
  ASSERT_TRUE(out.allSucceeded()) << out.describeFailures();
}

// The tuner must pick the same algorithm on every rank: an all-to-allv whose per-rank mean message size
// straddles a threshold (rank 0 sends 1 float per peer, the others 20000) on 2 hosts x 2, checked.
TEST(HierTuner, AllToAllvWithUnevenSendersAgreesOnTheAlgorithm) {
  const uint64_t seed = testSeed();
  constexpr int kN = 4;
  auto countFrom = [](int sender) -> size_t { return sender == 0 ? 1 : 20000; };
  auto body = [&](int rank, const myrUniqueId& id) -> int {
    useTransport(Transport::kShm);
    useHosts(rank, kN, 2);
    forceAlgorithms("");
    myrComm_t comm = nullptr;
    std::string err = initComm(&comm, kN, id, rank);
    MYR_CHILD_CHECK(err.empty(), err);
    std::vector<size_t> sc(kN), sd(kN), rc(kN), rd(kN);
    size_t sendTotal = 0, recvTotal = 0;
    for (int p = 0; p < kN; ++p) {
      sc[p] = countFrom(rank);
      sd[p] = sendTotal;
      sendTotal += sc[p];
      rc[p] = countFrom(p);
      rd[p] = recvTotal;
      recvTotal += rc[p];
    }
    std::vector<float> send(sendTotal), recv(recvTotal, -1.0f);
    fillPattern(send.data(), sendTotal * sizeof(float), rank, 0, seed);
    const myrResult_t res =
        myrAllToAllv(send.data(), sc.data(), sd.data(), recv.data(), rc.data(), rd.data(), myrFloat32, comm, nullptr);
    MYR_CHILD_CHECK(res == myrSuccess, resultText("myrAllToAllv", res, comm));
    std::vector<float> want(recvTotal);
    for (int p = 0; p < kN; ++p) {
      fillPattern(want.data() + rd[p], rc[p] * sizeof(float), p, static_cast<size_t>(rank) * countFrom(p) * 4, seed);
    }
    MYR_CHILD_CHECK(std::memcmp(want.data(), recv.data(), recvTotal * sizeof(float)) == 0, "recvbuff is wrong");
    err = finishComm(comm, nullptr);
    MYR_CHILD_CHECK(err.empty(), err);
    return 0;
  };
  const ForkOutcome out = forkRanks(kN, body, 60s, seed);
  ASSERT_TRUE(out.allSucceeded()) << out.describeFailures();
}

std::vector<HierParam> hierParams() {
  std::vector<HierParam> params;
  for (const char* algo : kAlgorithms) {
    params.push_back({algo, 4, 2, false, {}});
    params.push_back(isHier(algo) ? HierParam{algo, 6, 3, true, {}} : HierParam{algo, 5, 2, true, {}});
    if (!isHier(algo)) continue;
    // Hosts of different sizes: small hosts' ranks serve several lanes (a 1-rank host all of them).
    params.push_back(uneven(algo, {3, 3, 1}, false, true));
    params.push_back(uneven(algo, {2, 2, 1}, true, false));
    params.push_back(uneven(algo, {4, 1}, true, false));
  }
  params.push_back({"", 4, 2, false, {}});
  params.push_back({"", 5, 2, true, {}});
  params.push_back({kHierList, 4, 2, true, {}});
  params.push_back({kHierList, 6, 2, false, {}});
  params.push_back(uneven(kHierList, {1, 4, 2}, false, true));
  params.push_back(uneven("", {3, 3, 1}, false, false));  // the tuner picks the hierarchical forms here too
  params.push_back({"", 8, 2, false, {}});  // 2 hosts x 4, the shape the tuner's thresholds were measured on
  return params;
}

INSTANTIATE_TEST_SUITE_P(Mp, HierMp, testing::ValuesIn(hierParams()), hierName);

}  // namespace
}  // namespace myriad::test
