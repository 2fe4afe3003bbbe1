// myriad-sim: predicts one collective call of the library's own plans on a simulated leaf-spine fabric
// (docs/simulator.md). Prints the chosen algorithm, a per-link-class utilisation summary, the busiest
// links, and on its last line the predicted time in µs and busbw (or one JSON object with --json).
#include <CLI/CLI.hpp>
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <string>
#include <thread>
#include <vector>

#include "dispatch/registry.h"
#include "tools/sim/bootstrap_model.h"
#include "tools/sim/chrome_trace.h"
#include "tools/sim/fabric.h"
#include "tools/sim/plan_call.h"
#include "tools/sim/steady.h"
#include "tools/sim/virtual_executor.h"

using namespace myriad;
using namespace myriad::netsim;

namespace {

// "4096", "64K", "1M", "1G" (powers of 1024).
bool parseBytes(const std::string& text, size_t* out) {
  size_t pos = 0;
  unsigned long long v = 0;
  try {
    v = std::stoull(text, &pos);
  } catch (...) {
    return false;
  }
  std::string unit = text.substr(pos);
  int shift = unit.empty() || unit == "B" ? 0 : unit == "K" ? 10 : unit == "M" ? 20 : unit == "G" ? 30 : -1;
  if (shift < 0) return false;
  *out = static_cast<size_t>(v) << shift;
  return true;
}

// "A:B:C" -> three numbers; false unless exactly three, each a number.
bool parseTriple(const std::string& text, double out[3]) {
  size_t start = 0;
  for (int i = 0; i < 3; ++i) {
    const size_t colon = text.find(':', start);
    if ((i < 2) != (colon != std::string::npos)) return false;
    const std::string part = text.substr(start, i < 2 ? colon - start : std::string::npos);
    size_t used = 0;
    try {
      out[i] = std::stod(part, &used);
    } catch (...) {
      return false;
    }
    if (used != part.size()) return false;
    start = colon + 1;
  }
  return true;
}

bool isIndex(double v, int below) {
  return v >= 0 && v < below && v == static_cast<int>(v);
}

// --elephant LEAF:SPINE:LEAF2 (a flow of another tenant from LEAF over SPINE down to LEAF2, never ending),
// --degrade LEAF:SPINE:FACTOR (the cable between them, both ways, at 1/FACTOR of its speed) and
// --fail LEAF:SPINE:AT_US (that cable, both ways, dead from AT_US into the call), on `fabric`.
Status applyScenarios(Fabric& fabric, const std::vector<std::string>& elephants,
                      const std::vector<std::string>& degraded, const std::vector<std::string>& failed, double resumeUs,
                      std::vector<Elephant>* out, std::vector<LinkFailure>* failures) {
  const int leaves = fabric.leaves(), spines = fabric.spec().spines;
  for (const std::string& e : elephants) {
    double v[3];
    if (!parseTriple(e, v) || !isIndex(v[0], leaves) || !isIndex(v[1], spines) || !isIndex(v[2], leaves) ||
        v[0] == v[2])
      return invalidArgument("--elephant '" + e + "': want LEAF:SPINE:LEAF2, two different leaves below " +
                             std::to_string(leaves) + " and a spine below " + std::to_string(spines));
    const int from = static_cast<int>(v[0]), spine = static_cast<int>(v[1]), to = static_cast<int>(v[2]);
    out->push_back(Elephant{{fabric.leafUp(from, spine), fabric.spineDown(spine, to)}});
  }
  for (const std::string& d : degraded) {
    double v[3];
    if (!parseTriple(d, v) || !isIndex(v[0], leaves) || !isIndex(v[1], spines) || !(v[2] >= 1))
      return invalidArgument("--degrade '" + d + "': want LEAF:SPINE:FACTOR, a leaf below " + std::to_string(leaves) +
                             ", a spine below " + std::to_string(spines) + " and a factor of at least 1");
    const int leaf = static_cast<int>(v[0]), spine = static_cast<int>(v[1]);
    fabric.degrade(fabric.leafUp(leaf, spine), v[2]);
    fabric.degrade(fabric.spineDown(spine, leaf), v[2]);
  }
  for (const std::string& d : failed) {
    double v[3];
    if (!parseTriple(d, v) || !isIndex(v[0], leaves) || !isIndex(v[1], spines) || !(v[2] >= 0))
      return invalidArgument("--fail '" + d + "': want LEAF:SPINE:AT_US, a leaf below " + std::to_string(leaves) +
                             ", a spine below " + std::to_string(spines) + " and a time (µs) of at least 0");
    const int leaf = static_cast<int>(v[0]), spine = static_cast<int>(v[1]);
    failures->push_back(
        LinkFailure{{fabric.leafUp(leaf, spine), fabric.spineDown(spine, leaf)}, v[2] * 1e-6, resumeUs * 1e-6});
  }
  return Status::ok();
}

int fail(const Status& s) {
  std::fprintf(stderr, "myriad-sim: %s\n", s.toString().c_str());
  return 1;
}

// --bootstrap: the init of `spec.nranks` ranks (bootstrap_model.h): the root's part, then the connections and
// Bruck rounds run on `exec`; the last line is the predicted init time.
// exchange: run the exchange's plans (else the root's part alone: its max-min components span the fabric,
// so the run grows as n^2 per round, minutes at 16,384 ranks).
int runBootstrap(const BootstrapSpec& spec, const VirtualExecutor& exec, bool exchangeToo, bool json) {
  auto model = bootstrapModel(spec);
  if (!model.isOk()) return fail(model.status());
  const BootstrapModel& m = model.value();
  Result<RunResult> run = RunResult{};
  if (exchangeToo) run = exec.run(m.plans);
  if (!run.isOk()) return fail(run.status());
  const double exchange = run.value().seconds, total = m.rootSeconds + exchange;
  if (json) {
    std::printf(
        "{\"bootstrap\":\"bruck\",\"ranks\":%d,\"rounds\":%d,\"store_requests\":%llu,\"store_wait_keys\":%llu,"
        "\"abort_polls\":%llu,"
        "\"store_bytes_in\":%llu,"
        "\"store_bytes_out\":%llu,\"root_s\":%.6f,\"exchange_s\":%.6f,\"init_s\":%.6f,\"held_per_rank\":%llu,"
        "\"connections_per_rank\":%d,\"messages\":%llu,\"exchange_run\":%s}\n",
        spec.nranks, m.rounds, static_cast<unsigned long long>(m.storeRequests),
        static_cast<unsigned long long>(m.storeWaitKeys), static_cast<unsigned long long>(m.abortPolls),
        static_cast<unsigned long long>(m.storeBytesIn), static_cast<unsigned long long>(m.storeBytesOut),
        m.rootSeconds, exchange, total, static_cast<unsigned long long>(m.heldPerRank), m.connectionsPerRank,
        static_cast<unsigned long long>(run.value().messages), exchangeToo ? "true" : "false");
    return 0;
  }
  std::printf("bootstrap of %d ranks: Bruck's all-gather of %.0f-byte descriptions in %d rounds\n", spec.nranks,
              spec.descriptionBytes, m.rounds);
  std::printf(
      "store root: %d hellos, %llu requests (wait-alls of %llu keys in all) and %llu polls of the abort notice by "
      "waiting ranks (%.1f µs of CPU per hello, %.1f per request, %.2f per key), %llu bytes in, %llu out: %.3f s\n",
      spec.nranks, static_cast<unsigned long long>(m.storeRequests), static_cast<unsigned long long>(m.storeWaitKeys),
      static_cast<unsigned long long>(m.abortPolls), spec.storeHelloUs, spec.storeOpUs, spec.storeKeyUs,
      static_cast<unsigned long long>(m.storeBytesIn), static_cast<unsigned long long>(m.storeBytesOut), m.rootSeconds);
  if (exchangeToo)
    std::printf("exchange over the fabric: %d connections per rank (hellos included), %llu messages: %.3f ms\n",
                m.connectionsPerRank, static_cast<unsigned long long>(run.value().messages), exchange * 1e3);
  else
    std::printf("exchange over the fabric: not run (--bootstrap-root-only)\n");
  std::printf("held per rank: %llu bytes of descriptions\n", static_cast<unsigned long long>(m.heldPerRank));
  std::printf("init_s %.6f\n", total);
  return 0;
}

// "+0.0123%"
std::string fmtPercent(double relative) {
  char b[32];
  std::snprintf(b, sizeof b, "%+.4f%%", 100 * relative);
  return b;
}
}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"myriad-sim: the library's own plans in virtual time over a leaf-spine fabric model"};
  FabricSpec fab;
  std::string collective = "all_reduce", bytesText = "1M", algo;
  double linkGbps = 100, spineGbps = 0, latencyUs = kDefaultLinkLatency * 1e6, payloadFraction = 1;
  int paths = 1;
  bool json = false;
  app.add_option("--ranks", fab.nranks, "ranks of the call")->required()->check(CLI::Range(1, 1 << 17));
  app.add_option("--ranks-per-host", fab.ranksPerHost, "ranks on each host (G)")->capture_default_str();
  app.add_option("--rails", fab.rails, "NICs per host (R); NIC r serves local ranks r mod R")->capture_default_str();
  app.add_option("--collective", collective, "all_reduce|all_gather|reduce_scatter|all_to_all|broadcast")
      ->capture_default_str();
  app.add_option("--bytes", bytesText, "size as the perf binaries count it (K, M, G suffixes)")->capture_default_str();
  app.add_option("--algo", algo, "force an algorithm by its registry name (default: the tuner's choice)");
  app.add_option("--spines", fab.spines, "spine switches (S)")->capture_default_str();
  app.add_option("--hosts-per-leaf", fab.hostsPerLeaf, "hosts under each leaf switch (H)")->capture_default_str();
  app.add_option("--link-gbps", linkGbps, "NIC and leaf-spine link speed, Gb/s")->capture_default_str();
  app.add_option("--spine-gbps", spineGbps,
                 "leaf-spine link speed, Gb/s (default: --link-gbps; lower it to "
                 "oversubscribe)");
  app.add_option("--latency-us", latencyUs, "per-hop latency, µs")->capture_default_str();
  app.add_option("--payload-fraction", payloadFraction,
                 "share of a NIC or leaf-spine link's rate that carries payload, the rest being frame and packet "
                 "headers (TCP in 1,500-byte Ethernet frames: 1448/1514 = 0.956, preamble and gap not counted)")
      ->capture_default_str()
      ->check(CLI::Range(0.01, 1.0));
  app.add_option("--seed", fab.seed, "ECMP and port seed")->capture_default_str();
  app.add_flag("--same-leaf-seeds", fab.sameLeafSeeds, "every leaf hashes with one seed (polarisation)");
  app.add_option("--paths", paths, "paths per connection (the multipath transport's path count)")
      ->capture_default_str()
      ->check(CLI::Range(1, 64));
  std::string policyName = "static";
  app.add_option("--policy", policyName,
                 "how a pair's paths are used: static (an even split) or adaptive (the library's multipath "
                 "control loop judges each path on its service times and moves slow ones to fresh ports)")
      ->capture_default_str()
      ->check(CLI::IsMember({"static", "adaptive"}));
  app.add_flag("--json", json, "print one JSON object instead of the text report");
  std::vector<std::string> elephants, degraded;
  app.add_option("--elephant", elephants,
                 "LEAF:SPINE:LEAF2: a never-ending flow of another tenant from leaf LEAF up to spine SPINE and "
                 "down to leaf LEAF2, taking its fair share of both links (repeatable)");
  app.add_option("--degrade", degraded,
                 "LEAF:SPINE:FACTOR: the cable between leaf LEAF and spine SPINE runs at 1/FACTOR of its "
                 "speed, both ways (degraded optics; repeatable)");
  std::vector<std::string> failed;
  double resumeUs = 200000;
  app.add_option("--fail", failed,
                 "LEAF:SPINE:AT_US: the cable between leaf LEAF and spine SPINE fails, both ways, AT_US into the "
                 "call; new flows hash over the spines left, flows caught on it resume after --resume-us "
                 "(repeatable)");
  app.add_option("--resume-us", resumeUs,
                 "how long a flow cut by --fail is stopped before it goes on over the path ECMP picks then (its "
                 "sender's retransmission timeout: Linux's least is 200 ms)")
      ->capture_default_str()
      ->check(CLI::NonNegativeNumber);
  std::string tracePath;
  app.add_option("--trace", tracePath,
                 "write every step of every rank as a Chrome trace (Perfetto, chrome://tracing) to this file; "
                 "for runs of at most 2 million steps");
  double eagerMiB = kDefaultEagerBytes / (1 << 20);
  app.add_option("--eager-mib", eagerMiB,
                 "MiB a connection carries ahead of the receives posted for them (its socket buffers); a message "
                 "that does not fit waits for its receive; 0: every message does")
      ->capture_default_str()
      ->check(CLI::NonNegativeNumber);
  bool profile = false, planEveryRank = false;
  std::string steadyMode = "auto";
  app.add_option("--steady", steadyMode,
                 "cut the plans' periodic regions (a ring's rounds, a tree's slices) short, run them at a few "
                 "lengths and extrapolate (on), run in full (off), or cut when the plans have over 20M steps (auto)")
      ->check(CLI::IsMember({"auto", "on", "off"}))
      ->capture_default_str();
  SteadyOptions steadyOptions;
  app.add_option("--steady-tolerance", steadyOptions.settled,
                 "how closely (relative time) the steady state's check run must agree with its extrapolation; "
                 "until it does, the kept blocks double while all runs stay shorter than one full run")
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
  steadyOptions.threads = std::max(1u, std::thread::hardware_concurrency());
  app.add_option("--threads", steadyOptions.threads,
                 "runs of the steady state made at once (a round's runs are independent; each holds its own "
                 "copy of the run's state)")
      ->capture_default_str()
      ->check(CLI::Range(1u, 256u));
  bool bootstrap = false;
  BootstrapSpec boot;
  app.add_flag("--bootstrap", bootstrap,
               "model the communicator's init instead of a call: the store root's work for --ranks ranks and "
               "the exchange of descriptions among them (Bruck's all-gather, hellos included) over the fabric");
  bool rootOnly = false;
  app.add_flag("--bootstrap-root-only", rootOnly,
               "with --bootstrap: the store root's part only, without running the exchange over the fabric "
               "(that run grows as n^2 per round: minutes at 16,384 ranks)");
  app.add_option("--store-hello-us", boot.storeHelloUs,
                 "with --bootstrap: the root's CPU per store client (connection and hello), µs "
                 "(myriad_bootstrap_bench --store-cost measures it)")
      ->capture_default_str()
      ->check(CLI::NonNegativeNumber);
  app.add_option("--store-op-us", boot.storeOpUs, "with --bootstrap: the root's CPU per store request, µs")
      ->capture_default_str()
      ->check(CLI::NonNegativeNumber);
  app.add_option("--store-key-us", boot.storeKeyUs,
                 "with --bootstrap: the root's CPU per key of a wait-all beyond the request's own, µs")
      ->capture_default_str()
      ->check(CLI::NonNegativeNumber);
  app.add_flag("--plan-every-rank", planEveryRank,
               "plan every rank in full instead of one rank per plan class (the algorithm's planClass)");
  app.add_flag("--profile", profile, "print where the simulator's own time goes (plan, run, rerates) on stderr");
  CLI11_PARSE(app, argc, argv);

  CallSpec call;
  if (!parseBytes(bytesText, &call.bytes)) return fail(invalidArgument("--bytes '" + bytesText + "' is not a size"));
  auto kind = parseCollective(collective);
  if (!kind.isOk()) return fail(kind.status());
  call.kind = kind.value();
  if (!algo.empty()) {  // checked here, so that the error names the flag and not the library's MYRIAD_ALGO
    const Algorithm* a = findAlgorithm(algo);
    if (!a)
      return fail(invalidArgument("--algo '" + algo + "' is no algorithm; for " + collective + ": " +
                                  algorithmNames(&call.kind)));
    if (a->kind() != call.kind)
      return fail(invalidArgument("--algo " + algo + " is not for " + collective + "; for " + collective + ": " +
                                  algorithmNames(&call.kind)));
  }
  call.nranks = fab.nranks, call.ranksPerHost = fab.ranksPerHost, call.algo = algo;
  fab.linkLatency = latencyUs * 1e-6;
  fab.nicBytesPerSec = linkGbps * 1e9 / 8 * payloadFraction;
  fab.spineBytesPerSec = (spineGbps > 0 ? spineGbps : linkGbps) * 1e9 / 8 * payloadFraction;
  auto fabric = Fabric::make(fab);
  if (!fabric.isOk()) return fail(fabric.status());
  std::vector<Elephant> background;
  std::vector<LinkFailure> failures;
  if (Status s = applyScenarios(fabric.value(), elephants, degraded, failed, resumeUs, &background, &failures);
      !s.isOk())
    return fail(s);
  if (bootstrap) {
    VirtualExecutor exec(fabric.value(), paths, background);
    exec.failures(failures);
    boot.nranks = fab.nranks;
    return runBootstrap(boot, exec, !rootOnly, json);
  }
  const auto t0 = std::chrono::steady_clock::now();
  auto planned = planCall(call, !planEveryRank);
  if (!planned.isOk()) return fail(planned.status());
  const auto t1 = std::chrono::steady_clock::now();
  const size_t totalSteps = planned.value().plans.steps();
  constexpr size_t kTraceSteps = 2'000'000;
  if (!tracePath.empty() && totalSteps > kTraceSteps)
    return fail(invalidArgument("--trace: this call has " + std::to_string(totalSteps) + " steps, more than the " +
                                std::to_string(kTraceSteps) + " a trace takes; use fewer ranks or bytes"));
  VirtualExecutor exec(fabric.value(), paths, background);
  exec.traceSteps(!tracePath.empty());
  exec.failures(failures);
  exec.eagerBytes(eagerMiB * (1 << 20));
  exec.policy(policyName == "adaptive" ? PathPolicy::kAdaptive : PathPolicy::kStatic);
  constexpr uint64_t kSteadyAbove = 20'000'000;
  SteadyReport steady;
  auto res = steadyMode == "on" || (steadyMode == "auto" && totalSteps > kSteadyAbove)
                 ? runSteady(exec, planned.value().plans, steadyOptions, &steady)
                 : exec.run(planned.value().plans);
  if (!res.isOk()) return fail(res.status());
  if (steady.used && !steady.settled)
    std::fprintf(stderr,
                 "myriad-sim: warning: the steady state did not settle: its check run differs from the "
                 "extrapolation by %+.3f%% (tolerance %.3f%%) and longer cuts would cost more than a full run; "
                 "--steady off runs the call in full\n",
                 100 * steady.residual, 100 * steadyOptions.settled);
  if (!tracePath.empty()) {
    const std::string title =
        planned.value().algorithm + ", " + collective + " " + bytesText + ", " + std::to_string(call.nranks) + " ranks";
    if (Status s = writeChromeTrace(tracePath, title, planned.value().plans, res.value().steps); !s.isOk())
      return fail(s);
  }
  if (profile) {
    const auto t2 = std::chrono::steady_clock::now();
    const size_t steps = totalSteps;
    const RunResult& p = res.value();
    std::fprintf(stderr,
                 "profile: plan %.3f s (%d ranks planned, %d moved by plan class, %d of them checked), run %.3f s; "
                 "%zu steps (%zu distinct plans), %llu messages, %llu rerates in "
                 "%.2f filling rounds over %.1f flows and %.1f links on average; windows per rank: %zu steps, %zu "
                 "messages per connection\n",
                 std::chrono::duration<double>(t1 - t0).count(), planned.value().planned, planned.value().moved,
                 planned.value().checked, std::chrono::duration<double>(t2 - t1).count(), steps,
                 planned.value().plans.shapes(), static_cast<unsigned long long>(p.messages),
                 static_cast<unsigned long long>(p.rerates),
                 p.rerates ? static_cast<double>(p.rerateRounds) / static_cast<double>(p.rerates) : 0.0,
                 p.rerates ? static_cast<double>(p.rerateFlows) / static_cast<double>(p.rerates) : 0.0,
                 p.rerates ? static_cast<double>(p.rerateLinks) / static_cast<double>(p.rerates) : 0.0, p.stepWindow,
                 p.messageWindow);
    if (steady.used)
      std::fprintf(
          stderr,
          "profile: steady state: %d periodic region(s) cut short; %d runs of %llu steps in all (the full "
          "plans: %zu); the check run differs from its extrapolation by %+.4f%% (%s, kept x%llu); regions: %s\n",
          steady.regions, steady.runs, static_cast<unsigned long long>(steady.steps), steps, 100 * steady.residual,
          steady.settled ? "settled" : "NOT settled", static_cast<unsigned long long>(steady.kept),
          steady.shapes.c_str());
    if (steady.used) {
      std::string rounds;
      for (size_t i = 0; i < steady.residuals.size(); ++i)
        rounds += (i ? ", x" : "x") + std::to_string(steady.first << i) + " " + fmtPercent(steady.residuals[i]);
      std::fprintf(stderr, "profile: steady state: each round's check against its extrapolation: %s\n", rounds.c_str());
    } else if (steadyMode != "off" && !steady.why.empty())
      std::fprintf(stderr, "profile: run in full: %s\n", steady.why.c_str());
  }
  const RunResult& r = res.value();
  const double us = r.seconds * 1e6;
  const double algBw = r.seconds > 0 ? static_cast<double>(call.bytes) / r.seconds / 1e9 : 0;
  const double busBw = algBw * busBwFactor(call.kind, call.nranks);

  // Utilisation: bytes carried / (capacity * call time), per link class (mean and max) and the top links.
  const auto& links = fabric.value().links();
  struct Class {
    int links = 0, used = 0;
    double sum = 0, max = 0;
  };
  std::map<std::string, Class> classes;
  std::vector<std::pair<double, int>> top;
  for (size_t l = 0; l < links.size(); ++l) {
    double u = r.seconds > 0 ? r.linkBytes[l] / (links[l].capacity * r.seconds) : 0;
    Class& c = classes[linkKindName(links[l].kind)];
    ++c.links, c.sum += u, c.max = std::max(c.max, u), c.used += r.linkBytes[l] > 0;
    top.emplace_back(u, static_cast<int>(l));
  }
  std::sort(top.rbegin(), top.rend());
  const int spinesUsed =
      static_cast<int>(std::count_if(r.spineFlows.begin(), r.spineFlows.end(), [](int f) { return f > 0; }));
  const int spineMax = r.spineFlows.empty() ? 0 : *std::max_element(r.spineFlows.begin(), r.spineFlows.end());
  if (json) {
    // The steady state, when it was used: whether it settled, the check run's residual and the runs made.
    char steadyJson[160] = "null";
    if (steady.used)
      std::snprintf(steadyJson, sizeof steadyJson, "{\"settled\":%s,\"residual\":%.6f,\"runs\":%d,\"kept\":%llu}",
                    steady.settled ? "true" : "false", steady.residual, steady.runs,
                    static_cast<unsigned long long>(steady.kept));
    std::printf(
        "{\"algorithm\":\"%s\",\"collective\":\"%s\",\"ranks\":%d,\"ranks_per_host\":%d,\"bytes\":%zu,"
        "\"time_us\":%.3f,\"algbw_gbs\":%.3f,\"busbw_gbs\":%.3f,\"messages\":%llu,\"flows\":%llu,"
        "\"spine_flows_max\":%d,\"flows_cut\":%llu,\"policy\":\"%s\",\"repaths\":%llu,\"steady\":%s,\"links\":{",
        planned.value().algorithm.c_str(), collective.c_str(), call.nranks, call.ranksPerHost, call.bytes, us, algBw,
        busBw, static_cast<unsigned long long>(r.messages), static_cast<unsigned long long>(r.flows), spineMax,
        static_cast<unsigned long long>(r.flowsCut), policyName.c_str(), static_cast<unsigned long long>(r.repaths),
        steadyJson);
    bool first = true;
    for (const auto& [name, c] : classes) {
      std::printf("%s\"%s\":{\"count\":%d,\"used\":%d,\"mean_util\":%.4f,\"max_util\":%.4f}", first ? "" : ",",
                  name.c_str(), c.links, c.used, c.links ? c.sum / c.links : 0, c.max);
      first = false;
    }
    std::printf("}}\n");
    return 0;
  }
  std::printf("algorithm %s, %d ranks (%d per host, %d hosts, %d leaves, %d spines), %d path(s) per pair, %s\n",
              planned.value().algorithm.c_str(), call.nranks, call.ranksPerHost, fabric.value().hosts(),
              fabric.value().leaves(), fab.spines, paths, policyName.c_str());
  if (policyName == "adaptive")
    std::printf("%llu re-paths (slow paths moved to fresh ports by the control loop)\n",
                static_cast<unsigned long long>(r.repaths));
  std::printf("%llu messages, %llu flows; flows per spine: max %d, %d of %d spines used\n",
              static_cast<unsigned long long>(r.messages), static_cast<unsigned long long>(r.flows), spineMax,
              spinesUsed, fab.spines);
  if (!failures.empty())
    std::printf("%zu link failure(s): %llu flows cut, each resumed after %.0f µs where a spine was left\n",
                failures.size(), static_cast<unsigned long long>(r.flowsCut), resumeUs);
  std::printf("%-11s %6s %6s %9s %9s\n", "links", "count", "used", "mean util", "max util");
  for (const auto& [name, c] : classes)
    std::printf("%-11s %6d %6d %8.1f%% %8.1f%%\n", name.c_str(), c.links, c.used, 100 * (c.links ? c.sum / c.links : 0),
                100 * c.max);
  for (size_t i = 0; i < std::min<size_t>(5, top.size()) && top[i].first > 0; ++i)
    std::printf("  busiest: %-28s %5.1f%%\n", fabric.value().linkName(top[i].second).c_str(), 100 * top[i].first);
  std::printf("time_us %.3f busbw_gbs %.3f\n", us, busBw);
  return 0;
}
