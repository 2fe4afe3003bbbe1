// Option parsing with CLI11. CLI11 only takes one-letter names after a single dash and would read nccl-tests'
// and mpirun's "-np 4" as "-n p4" (iterations), so "-np" is rewritten to "--np" before CLI11 sees argv; every
// other flag is declared as nccl-tests spells it (-b 8 or -b8, with the long names --minbytes etc. as well).
#include "benchmarks/common/options.h"

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "tests/common/dtype_values.h"

namespace myriad::bench {
namespace {

struct NamedType {
  const char* name;
  myrDataType_t type;
};

// nccl-tests' names first, then the aliases Myriad accepts.
constexpr NamedType kTypeNames[] = {
    {"int8", myrInt8},       {"uint8", myrUint8},       {"int32", myrInt32},        {"uint32", myrUint32},
    {"int64", myrInt64},     {"uint64", myrUint64},     {"half", myrFloat16},       {"float", myrFloat32},
    {"double", myrFloat64},  {"bfloat16", myrBfloat16}, {"f8e4m3", myrFloat8e4m3},  {"f8e5m2", myrFloat8e5m2},
    {"char", myrInt8},       {"int", myrInt32},         {"float16", myrFloat16},    {"float32", myrFloat32},
    {"float64", myrFloat64}, {"bf16", myrBfloat16},     {"fp8e4m3", myrFloat8e4m3}, {"fp8e5m2", myrFloat8e5m2},
};

bool parseTypes(const std::string& text, std::vector<myrDataType_t>* types) {
  types->clear();
  if (text == "all") {
    for (int t = 0; t < myrNumTypes; ++t) types->push_back(static_cast<myrDataType_t>(t));
    return true;
  }
  for (const NamedType& n : kTypeNames) {
    if (text == n.name) {
      types->push_back(n.type);
      return true;
    }
  }
  return false;
}

bool parseOps(const std::string& text, std::vector<myrRedOp_t>* ops) {
  ops->clear();
  for (int o = 0; o < myrNumOps; ++o) {
    const auto op = static_cast<myrRedOp_t>(o);
    if (text == "all" || text == test::redOpName(op)) ops->push_back(op);
  }
  return !ops->empty();
}

// Rewrites the single-dash "-np" (and "-np=N") of nccl-tests/mpirun habit for CLI11.
std::vector<std::string> normalisedArgs(int argc, char** argv) {
  std::vector<std::string> args;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "-np" || a.rfind("-np=", 0) == 0) a.insert(0, "-");
    args.push_back(a);
  }
  return args;
}

}  // namespace

bool parseSize(const std::string& text, size_t* bytes) {
  if (text.empty() || text[0] < '0' || text[0] > '9') return false;
  char* end = nullptr;
  const unsigned long long value = std::strtoull(text.c_str(), &end, 10);
  int shift = 0;
  if (*end == 'K' || *end == 'k') shift = 10;
  if (*end == 'M' || *end == 'm') shift = 20;
  if (*end == 'G' || *end == 'g') shift = 30;
  if (shift != 0) ++end;
  if (*end != '\0') return false;
  if (shift != 0 && value > (~0ULL >> shift)) return false;
  *bytes = static_cast<size_t>(value << shift);
  return true;
}

std::vector<size_t> sizeSweep(const Options& o) {
  std::vector<size_t> sizes;
  for (size_t size = o.minBytes; size <= o.maxBytes;) {
    sizes.push_back(size);
    const size_t next = o.stepFactor > 1 ? size * static_cast<size_t>(o.stepFactor) : size + o.stepBytes;
    if (next <= size) break;  // size 0 with a factor, or an overflow
    size = next;
  }
  return sizes;
}

bool parseOptions(int argc, char** argv, Options* options, int* exitCode, const PeerFlags* peer) {
  Options o;
  std::string minBytes = "32M", maxBytes = "32M", stepBytes = "1M";
  std::string ops = "sum", types = "float";
  std::vector<std::string> checkOrCollective;
  int blocking = 0, average = 1, nthreads = 1, ngpus = 1;
  const char* program = argc > 0 ? argv[0] : "perf";
  if (const char* slash = std::strrchr(program, '/'); slash != nullptr) program = slash + 1;
  CLI::App app{"Myriad collective benchmark (nccl-tests compatible flags and output)", program};
  // As with nccl-tests' getopt, a flag given twice takes its last value (scripts append to a default line).
  app.option_defaults()->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);
  app.add_option("-b,--minbytes", minBytes, "smallest message size (K/M/G suffixes)")->capture_default_str();
  app.add_option("-e,--maxbytes", maxBytes, "largest message size (K/M/G suffixes)")->capture_default_str();
  app.add_option("-i,--stepbytes", stepBytes, "size increment when -f is 1")->capture_default_str();
  app.add_option("-f,--stepfactor", o.stepFactor, "size multiplier")->check(CLI::PositiveNumber)->capture_default_str();
  app.add_option("-n,--iters", o.iters, "timed iterations")->check(CLI::PositiveNumber)->capture_default_str();
  app.add_option("--blocks", o.blocks,
                 "time the out-of-place calls in this many blocks of -n/blocks and report the median block (robust "
                 "to a preemption; with -A a,b every algorithm runs in each block, in turn)")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  app.add_option("-w,--warmup_iters", o.warmupIters, "warmup iterations")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  if (peer == nullptr) {
    app.add_option("-c,--check", checkOrCollective, "check results (0/1)")
        ->check(CLI::IsMember({"0", "1"}))
        ->expected(1)
        ->default_str("1");
  } else {
    std::vector<std::string> names{"0", "1"};
    names.insert(names.end(), peer->collectives.begin(), peer->collectives.end());
    app.add_option("-c,--check", checkOrCollective, "the collective to time, and (0/1) whether to check results")
        ->check(CLI::IsMember(names))
        ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll)
        ->required();
    if (peer->addFlags) peer->addFlags(app);
  }
  if (peer == nullptr)
    app.add_option("-R,--local_register", o.registerBuffers,
                   "1: register the send and receive buffers with myrCommRegister before timing")
        ->check(CLI::IsMember({0, 1}))
        ->capture_default_str();
  app.add_option("-o,--op", ops, "sum|prod|max|min|avg|all")->capture_default_str();
  app.add_option("-d,--datatype", types,
                 "int8|uint8|int32|uint32|int64|uint64|half|float|double|bfloat16|f8e4m3|f8e5m2|all")
      ->capture_default_str();
  app.add_option("-r,--root", o.root, "root rank of rooted collectives; -1: every rank in turn")->capture_default_str();
  app.add_option("-z,--blocking", blocking, "1: blocking calls (NULL stream); 0: a host stream")
      ->check(CLI::IsMember({0, 1}))
      ->capture_default_str();
  app.add_option("-a,--average", average, "time across ranks: 0 rank 0, 1 mean, 2 min, 3 max")
      ->check(CLI::IsMember({0, 1, 2, 3}))
      ->capture_default_str();
  app.add_option("-t,--nthreads", nthreads, "threads per process (only 1)")->check(CLI::IsMember({1}));
  app.add_option("-g,--ngpus", ngpus, "devices per thread (only 1)")->check(CLI::IsMember({1}));
  app.add_option("--np", o.nranks, "-np N: fork N local ranks (when not started by a launcher)")
      ->check(CLI::PositiveNumber);
  app.add_option("--hosts", o.hosts,
                 "with -np N: emulate H hosts on this machine, ranks blocked by host (each gets its own "
                 "MYRIAD_HOST_ID: shm inside a host, tcp between hosts)")
      ->check(CLI::PositiveNumber);
  app.add_option("-A,--algo", o.algo,
                 "algorithm, exported as MYRIAD_ALGO before init (e.g. allreduce.ring); several of one collective "
                 "(allreduce.ring,allreduce.tree, with -np): one communicator per algorithm in the same ranks, "
                 "timed in turn at each size (paired)");
  app.add_option("-m,--memory", o.memory,
                 "buffer memory: host, or cuda (a cudaStream_t per rank; -z does not apply); default: cuda when "
                 "built with CUDA and a GPU is present, else host")
      ->check(CLI::IsMember({"host", "cuda"}));
  app.add_option("--floor-gbps", o.floorGbps,
                 "add a floor column: the bytes all ranks must read and write / this bandwidth (GB/s counted as "
                 "bytes read plus written, as reduce_kernel_bench's copy_GB/s)")
      ->check(CLI::PositiveNumber);
  app.add_option("--json", o.jsonPath, "also write one JSON object per result row to this file");
  app.add_flag("--paths", o.paths, "print each rank's network path telemetry (multipath) after the sweep");

  std::vector<std::string> args = normalisedArgs(argc, argv);
  std::reverse(args.begin(), args.end());  // CLI11 takes a vector in reverse order
  try {
    app.parse(args);
  } catch (const CLI::ParseError& e) {
    *exitCode = app.exit(e) == 0 ? 0 : 2;
    return false;
  }
  auto fail = [&](const std::string& message) {
    std::fprintf(stderr, "%s: %s\nRun with --help for more information.\n", app.get_name().c_str(), message.c_str());
    *exitCode = 2;
    return false;
  };
  if (!parseSize(minBytes, &o.minBytes)) return fail("-b: not a size: '" + minBytes + "'");
  if (!parseSize(maxBytes, &o.maxBytes)) return fail("-e: not a size: '" + maxBytes + "'");
  if (!parseSize(stepBytes, &o.stepBytes)) return fail("-i: not a size: '" + stepBytes + "'");
  if (o.minBytes > o.maxBytes) return fail("-b " + minBytes + " is larger than -e " + maxBytes);
  if (o.stepFactor <= 1 && o.stepBytes == 0) return fail("-i 0 with -f 1 would never reach -e");
  if (!parseOps(ops, &o.ops)) return fail("-o: unknown operation '" + ops + "'");
  if (!parseTypes(types, &o.types)) return fail("-d: unknown data type '" + types + "'");
  if (o.hosts > 1 && o.nranks < o.hosts)
    return fail("--hosts " + std::to_string(o.hosts) + " needs -np of at least as many ranks");
  for (const std::string& value : checkOrCollective) {
    if (value == "0" || value == "1") {
      o.check = value == "1";
    } else {
      o.collective = value;
    }
  }
  if (peer != nullptr && o.collective.empty()) return fail("-c: name the collective to time (e.g. -c allreduce)");
  o.blocking = blocking == 1;
  o.average = static_cast<Average>(average);
  *options = o;
  return true;
}

}  // namespace myriad::bench
