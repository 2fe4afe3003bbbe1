// myriad-info --tune (tune_table.h).
#include "tools/tune_table.h"

#include <cerrno>
#include <cstdlib>

#include "base/config.h"
#include "dispatch/select.h"
#include "plan/dtype.h"
#include "tuner/tuner.h"

namespace myriad::tools {

const char* const kTuneUsage =
    "myriad-info --tune --coll KIND --ranks N [--hosts H | --hosts 4+4+1] --bytes SIZE[,SIZE...] [--dtype float]\n"
    "                   [--cores C [--machines M]]\n"
    "  KIND: allreduce (or all_reduce), allgather, reducescatter, alltoall, broadcast, reduce, ...\n"
    "  --hosts H: N ranks on H hosts, contiguous and as even as possible; sizes with '+'. Default: one host.\n"
    "  --cores C: each machine has C cores (ranks beyond them share CPUs); --machines M: the hosts run on M\n"
    "  machines, contiguous and as even as possible (1: hosts emulated on one machine). Default: a machine per\n"
    "  host, of a size the model does not know.\n"
    "  SIZE: bytes as the collective is sized (per rank; all-to-all: per peer), with K, M or G suffixes.\n";

namespace {

bool parseSize(const std::string& text, size_t* out) {
  if (text.empty()) return false;
  char* end = nullptr;
  errno = 0;
  unsigned long long v = std::strtoull(text.c_str(), &end, 10);
  if (errno || end == text.c_str()) return false;
  std::string suffix(end);
  int shift = suffix.empty() ? 0 : suffix == "K" ? 10 : suffix == "M" ? 20 : suffix == "G" ? 30 : -1;
  if (shift < 0) return false;
  *out = static_cast<size_t>(v) << shift;
  return true;
}

}  // namespace

bool tuneTable(const std::vector<std::string>& args, std::string* out, std::string* error) {
  auto fail = [&](const std::string& why) {
    *error = why;
    return false;
  };
  std::string coll, hostsText, bytesText, dtypeText = "float";
  int nranks = 0, cores = 0, machines = 0;
  for (size_t i = 1; i < args.size(); i += 2) {
    const std::string& opt = args[i];
    if (i + 1 >= args.size()) return fail(opt + " needs a value");
    const std::string& v = args[i + 1];
    if (opt == "--coll") {
      coll = v;
    } else if (opt == "--ranks") {
      nranks = std::atoi(v.c_str());
      if (nranks < 1 || nranks > (1 << 16)) return fail("--ranks " + v + ": not a rank count");
    } else if (opt == "--hosts") {
      hostsText = v;
    } else if (opt == "--bytes") {
      bytesText = v;
    } else if (opt == "--dtype") {
      dtypeText = v;
    } else if (opt == "--cores") {
      cores = std::atoi(v.c_str());
      if (cores < 1) return fail("--cores " + v + ": not a core count");
    } else if (opt == "--machines") {
      machines = std::atoi(v.c_str());
      if (machines < 1) return fail("--machines " + v + ": not a machine count");
    } else {
      return fail("unknown option " + opt);
    }
  }
  std::string name;
  for (char c : coll)
    if (c != '_') name += c;
  CollKind kind = CollKind::kAllReduce;
  bool found = false;
  for (CollKind k :
       {CollKind::kAllReduce, CollKind::kBroadcast, CollKind::kReduce, CollKind::kAllGather, CollKind::kReduceScatter,
        CollKind::kAllToAll, CollKind::kGather, CollKind::kScatter, CollKind::kBarrier})
    if (name == collName(k)) kind = k, found = true;
  if (!found) return fail("--coll '" + coll + "' is no collective the tuner chooses for");
  if (nranks < 1) return fail("--ranks is required");
  myrDataType_t dtype = myrFloat32;
  found = false;
  for (int d = 0; d < myrNumTypes; ++d)
    if (dtypeText == dtypeName(static_cast<myrDataType_t>(d))) dtype = static_cast<myrDataType_t>(d), found = true;
  if (!found) return fail("--dtype '" + dtypeText + "' is no data type");

  std::vector<int> hostOf;
  if (hostsText.find('+') != std::string::npos) {
    size_t at = 0;
    int h = 0;
    while (at <= hostsText.size()) {
      size_t plus = std::min(hostsText.find('+', at), hostsText.size());
      int size = std::atoi(hostsText.substr(at, plus - at).c_str());
      if (size < 1) return fail("--hosts " + hostsText + ": expected sizes like 4+4+1");
      hostOf.insert(hostOf.end(), static_cast<size_t>(size), h++);
      at = plus + 1;
    }
    if (static_cast<int>(hostOf.size()) != nranks)
      return fail("--hosts " + hostsText + " holds " + std::to_string(hostOf.size()) + " ranks, --ranks says " +
                  std::to_string(nranks));
  } else {
    int nhosts = hostsText.empty() ? 1 : std::atoi(hostsText.c_str());
    if (nhosts < 1 || nhosts > nranks) return fail("--hosts " + hostsText + ": between 1 and --ranks hosts");
    for (int r = 0; r < nranks; ++r) hostOf.push_back(static_cast<int>(static_cast<long long>(r) * nhosts / nranks));
  }

  std::vector<size_t> sizes;
  if (kind == CollKind::kBarrier) sizes.push_back(0);
  for (size_t at = 0; at < bytesText.size();) {
    size_t comma = std::min(bytesText.find(',', at), bytesText.size());
    size_t b = 0;
    if (!parseSize(bytesText.substr(at, comma - at), &b))
      return fail("--bytes " + bytesText + ": expected sizes like 8,64K,1M");
    sizes.push_back(b);
    at = comma + 1;
  }
  if (sizes.empty()) return fail("--bytes is required");

  auto config = Config::fromEnv();
  if (!config.isOk()) return fail(config.status().message());
  auto tuner = tunerFor(config.value().tunerFile, config.value().tunerPlugin);
  if (!tuner.isOk()) return fail(tuner.status().message());
  auto layout = HostLayout::fromHostOf(hostOf);
  if (machines > 0 && cores == 0) return fail("--machines needs --cores");
  if (cores > 0) {
    const int nhosts = static_cast<int>(layout->hosts.size());
    if (machines == 0) machines = nhosts;
    if (machines > nhosts) return fail("--machines " + std::to_string(machines) + ": more than the hosts");
    std::vector<std::string> machineOf;
    for (int r = 0; r < nranks; ++r)
      machineOf.push_back(std::to_string(static_cast<long long>(hostOf[static_cast<size_t>(r)]) * machines / nhosts));
    layout = HostLayout::onMachines(*layout, machineOf, std::vector<int>(static_cast<size_t>(nranks), cores));
  }
  CommView view{0, layout};
  view.chunkBytes = config.value().chunkBytes;
  view.hostShm = !config.value().disableShm;
  view.netRdma = config.value().net == "rdma";
  out->clear();
  for (size_t bytes : sizes) {
    static char sendTag, recvTag;
    CollArgs a;
    a.kind = kind;
    a.dtype = dtype;
    a.count = bytes / dtypeSize(dtype);
    a.sendbuff = &sendTag;
    a.recvbuff = &recvTag;
    CallShape shape = shapeOf(a, view);
    std::vector<Candidate> candidates = candidatesFor(a, view);
    if (candidates.empty()) return fail(std::string("no algorithm can run this ") + collName(kind) + " call");
    Choice choice = tuner.value()->choose(shape, view, candidates);
    *out += explainChoice(shape, view.layout->describe() + view.layout->describeMachines(), choice) + "\n";
  }
  return true;
}

}  // namespace myriad::tools
