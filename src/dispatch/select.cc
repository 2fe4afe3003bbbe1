// selectAlgorithm: MYRIAD_ALGO, then the tuner, then a fallback; the choice is logged under COLL.
#include "dispatch/select.h"

#include <algorithm>
#include <map>
#include <mutex>

#include "base/log.h"
#include "dispatch/registry.h"
#include "tuner/tuner_file.h"

namespace myriad {

namespace {

std::string trim(const std::string& s) {
  size_t b = s.find_first_not_of(" \t"), e = s.find_last_not_of(" \t");
  return b == std::string::npos ? "" : s.substr(b, e - b + 1);
}

// The MYRIAD_ALGO entry for this call's collective, null when there is none.
Result<const Algorithm*> forcedAlgorithm(const std::string& list, CollKind kind) {
  const Algorithm* forced = nullptr;
  size_t pos = 0;
  while (pos <= list.size()) {
    size_t comma = std::min(list.find(',', pos), list.size());
    std::string name = trim(list.substr(pos, comma - pos));
    pos = comma + 1;
    if (name.empty()) continue;
    const Algorithm* a = findAlgorithm(name);
    if (!a)
      return invalidUsage("MYRIAD_ALGO names '" + name + "', which is no algorithm; valid names: " + algorithmNames());
    if (a->kind() != kind) continue;
    if (forced && forced != a)
      return invalidUsage("MYRIAD_ALGO names two algorithms for " + std::string(collName(kind)) + ": " +
                          forced->name() + " and " + a->name());
    forced = a;
  }
  return forced;
}

}  // namespace

std::vector<Candidate> candidatesFor(const CollArgs& args, const CommView& view) {
  std::vector<Candidate> out;
  for (const Algorithm* a : algorithmsFor(args.kind)) {
    if (!a->supports(args, view).isOk()) continue;
    out.push_back({a->name(), [a](const CollArgs& ca, const CommView& cv) { return a->plan(ca, cv); }});
  }
  return out;
}

Result<const Tuner*> tunerFor(const std::string& tunerFile, const std::string& tunerPlugin) {
  static std::mutex mu;
  static std::map<std::pair<std::string, std::string>, std::unique_ptr<Tuner>> tuners;
  std::lock_guard<std::mutex> lock(mu);
  auto& slot = tuners[{tunerFile, tunerPlugin}];
  if (slot) return slot.get();
  TunerConstants k = TunerConstants::defaults();
  if (!tunerFile.empty()) {
    MYR_ASSIGN_OR_RETURN(k, loadTunerFile(tunerFile));
  }
  std::unique_ptr<Tuner> tuner = makeModelTuner(k);
  if (!tunerPlugin.empty()) {
    auto withPlugin = makePluginTuner(tunerPlugin, makeModelTuner(k));
    if (withPlugin.isOk())
      tuner = std::move(withPlugin.value());
    else
      MYR_LOG(kWarn, kTune, -1, withPlugin.status().message() + "; the cost model chooses");
  }
  slot = std::move(tuner);
  return slot.get();
}

Result<const Algorithm*> selectAlgorithm(const CollArgs& args, const CommView& comm, const std::string& forced) {
  static const std::unique_ptr<Tuner> kModel = makeModelTuner(TunerConstants::defaults());
  return selectAlgorithm(args, comm, forced, *kModel);
}

Result<const Algorithm*> selectAlgorithm(const CollArgs& args, const CommView& comm, const Config& config) {
  MYR_ASSIGN_OR_RETURN(const Tuner* tuner, tunerFor(config.tunerFile, config.tunerPlugin));
  return selectAlgorithm(args, comm, config.algo, *tuner);
}

Result<const Algorithm*> selectAlgorithm(const CollArgs& args, const CommView& comm, const std::string& forcedList,
                                         const Tuner& tuner) {
  MYR_ASSIGN_OR_RETURN(const Algorithm* forced, forcedAlgorithm(forcedList, args.kind));
  if (forced) {
    Status s = forced->supports(args, comm);
    if (!s.isOk())
      return invalidUsage(std::string("MYRIAD_ALGO=") + forced->name() + " cannot run this call: " + s.message() +
                          "; valid names for " + collName(args.kind) + ": " + algorithmNames(&args.kind));
    MYR_LOG(kInfo, kColl, comm.rank, std::string(forced->name()) + " (forced by MYRIAD_ALGO)");
    return forced;
  }
  CallShape shape = shapeOf(args, comm);
  std::vector<Candidate> candidates = candidatesFor(args, comm);
  if (candidates.empty())
    return internalError(std::string("no algorithm can run this ") + collName(args.kind) + " call");
  Choice choice = tuner.choose(shape, comm, candidates);
  const Algorithm* a = findAlgorithm(choice.name);
  bool listed =
      std::any_of(candidates.begin(), candidates.end(), [&](const Candidate& c) { return choice.name == c.name; });
  if (a && listed) {
    MYR_LOG(kInfo, kColl, comm.rank,
            choice.name + " (" + choice.by + ": " + std::to_string(shape.bytes) + " B, " +
                std::to_string(shape.nranks) + " ranks, " + std::to_string(shape.nhosts) + " hosts)");
    return a;
  }
  const Algorithm* other = findAlgorithm(candidates.front().name);
  MYR_LOG(
      kInfo, kColl, comm.rank,
      std::string(other->name()) + " (fallback: the tuner chose '" + choice.name + "', which cannot run this call)");
  return other;
}

}  // namespace myriad
