// A tuner plugin (include/myriad/plugin/tuner_v1.h) in front of the cost model: the model prices the
// candidates, the plugin may pick another one. Anything wrong with the library is reported when it is loaded
// (makePluginTuner returns the reason); a bad answer at a call is a warning, once, and the model's choice.
#include <dlfcn.h>

#include <atomic>
#include <mutex>

#include "base/log.h"
#include "myriad/plugin/tuner_v1.h"
#include "tuner/tuner.h"

namespace myriad {
namespace {

class PluginTuner final : public Tuner {
 public:
  PluginTuner(void* handle, const myrTunerPlugin_v1* plugin, void* context, std::unique_ptr<Tuner> model)
      : handle_(handle),
        plugin_(plugin),
        context_(context),
        model_(std::move(model)),
        by_(std::string("plugin ") + (plugin->name ? plugin->name : "?")) {}
  ~PluginTuner() override {
    if (plugin_->destroy) plugin_->destroy(context_);
    dlclose(handle_);
  }
  const char* name() const override { return by_.c_str(); }

  Choice choose(const CallShape& shape, const CommView& view, std::span<const Candidate> cands) const override {
    Choice c = model_->choose(shape, view, cands);
    if (c.costs.size() < 2) return c;
    std::vector<const char*> names;
    std::vector<double> us;
    for (const CandidateCost& cc : c.costs) {
      names.push_back(cc.name.c_str());
      us.push_back(cc.us);
    }
    myrTunerCall_v1 call{collName(shape.kind),           shape.bytes,  shape.nranks, shape.nhosts, shape.maxLocal,
                         static_cast<int>(names.size()), names.data(), us.data()};
    int pick;
    {
      std::lock_guard<std::mutex> lock(mu_);
      pick = plugin_->choose(context_, &call);
    }
    if (pick == -1) return c;
    if (pick < 0 || pick >= call.ncandidates) {
      if (!warned_.exchange(true))
        MYR_LOG(kWarn, kTune, view.rank,
                "MYRIAD_TUNER_PLUGIN " + by_ + " returned " + std::to_string(pick) + " for " + collName(shape.kind) +
                    ", which is no candidate index (0.." + std::to_string(call.ncandidates - 1) +
                    " or -1); the cost model chooses (warned once)");
      return c;
    }
    c.name = c.costs[static_cast<size_t>(pick)].name;
    c.by = by_;
    return c;
  }

 private:
  void* handle_;
  const myrTunerPlugin_v1* plugin_;
  void* context_;
  std::unique_ptr<Tuner> model_;
  std::string by_;
  mutable std::mutex mu_;
  mutable std::atomic<bool> warned_{false};
};

}  // namespace

Result<std::unique_ptr<Tuner>> makePluginTuner(const std::string& path, std::unique_ptr<Tuner> model) {
  std::string what = "MYRIAD_TUNER_PLUGIN " + path + ": ";
  void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!handle) {
    const char* err = dlerror();
    return invalidArgument(what + "cannot be loaded: " + (err ? err : "unknown error"));
  }
  auto fail = [&](const std::string& why) -> Status {
    dlclose(handle);
    return invalidArgument(what + why);
  };
  auto* plugin = static_cast<const myrTunerPlugin_v1*>(dlsym(handle, MYRIAD_TUNER_PLUGIN_SYMBOL));
  if (!plugin) return fail("has no symbol " MYRIAD_TUNER_PLUGIN_SYMBOL);
  if (plugin->version != MYRIAD_TUNER_PLUGIN_VERSION)
    return fail("is version " + std::to_string(plugin->version) + ", this Myriad reads version " +
                std::to_string(MYRIAD_TUNER_PLUGIN_VERSION));
  if (!plugin->choose) return fail("has no choose function");
  void* context = nullptr;
  if (plugin->init) {
    int rc = plugin->init(&context);
    if (rc != 0) return fail("init returned " + std::to_string(rc));
  }
  return std::unique_ptr<Tuner>(std::make_unique<PluginTuner>(handle, plugin, context, std::move(model)));
}

}  // namespace myriad
