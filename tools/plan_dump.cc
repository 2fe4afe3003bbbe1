// myriad-info --plan: options -> HostLayout, CommView and CollArgs -> selected or named Algorithm ->
// Schedule::dump() per rank. The in-place forms are NCCL's, per collective (see include/myriad/myriad.h).
#include "tools/plan_dump.h"

#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <memory>

#include "dispatch/registry.h"
#include "dispatch/select.h"
#include "plan/comm_view.h"
#include "plan/dtype.h"

namespace myriad::tools {

const char* const kPlanUsage =
    "myriad-info --plan ALGO --nranks N [--hosts 4+4+1 | --hosts-of 0,0,1,...] --count C [--dtype float]\n"
    "            [--op sum] [--root R] [--rank R|all] [--in-place] [--chunk-bytes B] [--coll KIND]\n"
    "  ALGO: a registry name (myriad-info --algorithms), or `tuner` for the tuner's choice for --coll KIND\n"
    "  (allreduce, broadcast, reduce, allgather, reducescatter, alltoall, gather, scatter, barrier).\n"
    "  --hosts: host sizes, ranks numbered host by host; --hosts-of: each rank's host. Default: one host.\n"
    "  --count: elements as the C call takes them (not for barrier); --rank: the rank(s) to plan for (default 0).\n";

namespace {

bool parseInt(const std::string& text, long long lo, long long hi, long long* out) {
  if (text.empty()) return false;
  char* end = nullptr;
  errno = 0;
  const long long v = std::strtoll(text.c_str(), &end, 10);
  if (*end != '\0' || errno != 0 || v < lo || v > hi) return false;
  *out = v;
  return true;
}

// "4+4+1" or "0,0,1": the numbers between the separators.
bool parseList(const std::string& text, char sep, std::vector<int>* out) {
  size_t at = 0;
  while (true) {
    const size_t next = text.find(sep, at);
    long long v = 0;
    if (!parseInt(text.substr(at, next == std::string::npos ? std::string::npos : next - at), 0, 1 << 20, &v))
      return false;
    out->push_back(static_cast<int>(v));
    if (next == std::string::npos) return true;
    at = next + 1;
  }
}

bool parseKind(const std::string& name, CollKind* out) {
  for (CollKind k :
       {CollKind::kAllReduce, CollKind::kBroadcast, CollKind::kReduce, CollKind::kAllGather, CollKind::kReduceScatter,
        CollKind::kAllToAll, CollKind::kGather, CollKind::kScatter, CollKind::kBarrier}) {
    if (name == collName(k)) {
      *out = k;
      return true;
    }
  }
  return false;
}

bool parseDtype(const std::string& name, myrDataType_t* out) {
  const std::string n = name == "float32" ? "float" : name == "float16" ? "half" : name == "float64" ? "double" : name;
  for (int d = 0; d < myrNumTypes; ++d) {
    if (n == dtypeName(static_cast<myrDataType_t>(d))) {
      *out = static_cast<myrDataType_t>(d);
      return true;
    }
  }
  return false;
}

bool parseOp(const std::string& name, myrRedOp_t* out) {
  for (int o = 0; o < myrNumOps; ++o) {
    if (name == opName(static_cast<myrRedOp_t>(o))) {
      *out = static_cast<myrRedOp_t>(o);
      return true;
    }
  }
  return false;
}

// Made-up buffers, far enough apart for any count the tool plans; only their identity and offsets matter.
const auto kSendBase = static_cast<uintptr_t>(1) << 40;
const auto kRecvBase = static_cast<uintptr_t>(1) << 44;

// The call's buffers for `rank`, in place in NCCL's form for the collective when asked.
void setBuffers(CollArgs& a, int rank, bool inPlace) {
  auto* send = reinterpret_cast<uint8_t*>(kSendBase);
  auto* recv = reinterpret_cast<uint8_t*>(kRecvBase);
  const size_t block = a.count * dtypeSize(a.dtype);
  if (inPlace) {
    switch (a.kind) {
      case CollKind::kAllGather: send = recv + static_cast<size_t>(rank) * block; break;
      case CollKind::kReduceScatter: recv = send + static_cast<size_t>(rank) * block; break;
      case CollKind::kGather:
        if (rank == a.root) send = recv + static_cast<size_t>(rank) * block;
        break;
      case CollKind::kScatter:
        if (rank == a.root) recv = send + static_cast<size_t>(rank) * block;
        break;
      default: send = recv; break;
    }
  }
  a.sendbuff = a.kind == CollKind::kBarrier ? nullptr : send;
  a.recvbuff = a.kind == CollKind::kBarrier ? nullptr : recv;
}

}  // namespace

bool planDump(const std::vector<std::string>& args, std::string* out, std::string* error) {
  std::string algoName, hostsText, hostsOfText, rankText = "0", collText;
  long long nranks = 0, count = -1, root = 0, chunkBytes = 0;
  myrDataType_t dtype = myrFloat32;
  myrRedOp_t op = myrSum;
  bool inPlace = false;
  auto fail = [&](const std::string& why) {
    *error = why;
    return false;
  };
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& opt = args[i];
    if (opt == "--in-place") {
      inPlace = true;
      continue;
    }
    if (i + 1 >= args.size()) return fail(opt + " needs a value");
    const std::string& v = args[++i];
    if (opt == "--plan") {
      algoName = v;
    } else if (opt == "--nranks") {
      if (!parseInt(v, 1, 1 << 20, &nranks)) return fail("--nranks " + v + ": not a positive number");
    } else if (opt == "--hosts") {
      hostsText = v;
    } else if (opt == "--hosts-of") {
      hostsOfText = v;
    } else if (opt == "--count") {
      if (!parseInt(v, 0, 1LL << 40, &count)) return fail("--count " + v + ": not a count");
    } else if (opt == "--dtype") {
      if (!parseDtype(v, &dtype)) return fail("--dtype " + v + ": unknown (int8 ... fp8e5m2, as myriad prints them)");
    } else if (opt == "--op") {
      if (!parseOp(v, &op)) return fail("--op " + v + ": unknown (sum, prod, max, min, avg)");
    } else if (opt == "--root") {
      if (!parseInt(v, 0, 1 << 20, &root)) return fail("--root " + v + ": not a rank");
    } else if (opt == "--rank") {
      rankText = v;
    } else if (opt == "--chunk-bytes") {
      if (!parseInt(v, 1, 1LL << 40, &chunkBytes)) return fail("--chunk-bytes " + v + ": not a positive size");
    } else if (opt == "--coll") {
      collText = v;
    } else {
      return fail("unknown option " + opt);
    }
  }
  if (algoName.empty()) return fail("--plan needs an algorithm name");
  if (!hostsText.empty() && !hostsOfText.empty()) return fail("give --hosts or --hosts-of, not both");

  std::vector<int> hostOf;
  if (!hostsText.empty()) {
    std::vector<int> sizes;
    if (!parseList(hostsText, '+', &sizes)) return fail("--hosts " + hostsText + ": expected sizes like 4+4+1");
    for (size_t h = 0; h < sizes.size(); ++h) {
      if (sizes[h] == 0) return fail("--hosts " + hostsText + ": a host without ranks");
      hostOf.insert(hostOf.end(), static_cast<size_t>(sizes[h]), static_cast<int>(h));
    }
  } else if (!hostsOfText.empty()) {
    if (!parseList(hostsOfText, ',', &hostOf)) return fail("--hosts-of " + hostsOfText + ": expected 0,0,1,...");
  }
  if (hostOf.empty()) {
    if (nranks == 0) return fail("--nranks is required (or --hosts / --hosts-of)");
    hostOf.assign(static_cast<size_t>(nranks), 0);
  } else if (nranks != 0 && static_cast<size_t>(nranks) != hostOf.size()) {
    return fail("--nranks " + std::to_string(nranks) + " but the hosts hold " + std::to_string(hostOf.size()) +
                " ranks");
  }
  const int n = static_cast<int>(hostOf.size());
  if (root >= n) return fail("--root " + std::to_string(root) + " is not below " + std::to_string(n));

  const Algorithm* named = nullptr;
  CollKind kind = CollKind::kAllReduce;
  if (algoName == "tuner") {
    if (!parseKind(collText, &kind)) return fail("--plan tuner needs --coll KIND (allreduce, broadcast, ...)");
  } else {
    named = findAlgorithm(algoName);
    if (named == nullptr) return fail("no algorithm " + algoName + "; registered: " + algorithmNames(nullptr));
    kind = named->kind();
    if (!collText.empty() && collText != collName(kind)) return fail(algoName + " is not a " + collText + " algorithm");
  }
  if (kind == CollKind::kSendRecv) return fail(algoName + " plans a group's point-to-point calls: not from here");
  if (count < 0 && kind != CollKind::kBarrier) return fail("--count is required");

  std::vector<int> ranks;
  if (rankText == "all") {
    for (int r = 0; r < n; ++r) ranks.push_back(r);
  } else {
    long long r = 0;
    if (!parseInt(rankText, 0, n - 1, &r))
      return fail("--rank " + rankText + ": not a rank below " + std::to_string(n));
    ranks.push_back(static_cast<int>(r));
  }

  const std::shared_ptr<const HostLayout> layout = HostLayout::fromHostOf(hostOf);
  out->clear();
  for (int r : ranks) {
    CommView view{r, layout};
    if (chunkBytes > 0) view.chunkBytes = static_cast<size_t>(chunkBytes);
    CollArgs a;
    a.kind = kind;
    a.count = kind == CollKind::kBarrier ? 0 : static_cast<size_t>(count);
    a.dtype = dtype;
    a.op = op;
    a.root = static_cast<int>(root);
    setBuffers(a, r, inPlace);
    const Algorithm* algo = named;
    if (algo == nullptr) {
      auto chosen = selectAlgorithm(a, view, "");
      if (!chosen.isOk()) return fail("rank " + std::to_string(r) + ": " + chosen.status().message());
      algo = chosen.value();
    } else if (Status s = algo->supports(a, view); !s.isOk()) {
      return fail("rank " + std::to_string(r) + ": " + algoName + " cannot run this call: " + s.message());
    }
    auto plan = algo->plan(a, view);
    if (!plan.isOk()) return fail("rank " + std::to_string(r) + ": planning failed: " + plan.status().message());
    *out += "# rank " + std::to_string(r) + " of " + std::to_string(n) + ", hosts " + layout->describe() + ", " +
            collName(kind) + " count " + std::to_string(a.count) + " " + dtypeName(dtype) + " " + opName(op) +
            " root " + std::to_string(root) + (inPlace ? " in place" : "") +
            (named == nullptr ? std::string(", the tuner's choice") : std::string()) + "\n";
    *out += plan.value().dump();
  }
  return true;
}

}  // namespace myriad::tools
