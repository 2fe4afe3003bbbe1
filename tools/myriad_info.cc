// myriad-info: what this build of Myriad is and which settings it reads.
//   myriad-info            version, algorithms, this host's identity
//   myriad-info --env      every MYRIAD_* variable: name, type, default, meaning (markdown)
//   myriad-info --algorithms  every registered algorithm, one name per line
//   myriad-info --plan ALGO ...  an algorithm's Schedule for given ranks, hosts and call (tools/plan_dump.h)
//   myriad-info --tune ...  the tuner's predicted time of every candidate for a call shape (tools/tune_table.h)
//   myriad-info --tune-defaults  the cost model's default constants, in MYRIAD_TUNER_FILE's format
//   myriad-info --devices  the device calls on device memory would run on (MYRIAD_DEVICE) and the attributes
//                          the device executor relies on; exit 77 when there is none (say why)
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "base/config.h"
#include "device/device.h"
#include "dispatch/registry.h"
#include "myriad/myriad.h"
#include "rendezvous/peer_info.h"
#include "tools/plan_dump.h"
#include "tools/tune_table.h"
#include "tuner/tuner_file.h"

int main(int argc, char** argv) {
  if (argc > 1 && std::strcmp(argv[1], "--env") == 0) {
    std::fputs(myriad::envTableMarkdown().c_str(), stdout);
    return 0;
  }
  if (argc > 1 && std::strcmp(argv[1], "--algorithms") == 0) {
    for (const auto* a : myriad::allAlgorithms()) std::printf("%s\n", a->name());
    return 0;
  }
  if (argc > 1 && std::strcmp(argv[1], "--devices") == 0) {
    auto device = myriad::processDevice();
    if (!device.isOk()) {
      std::printf("no device: %s\n", device.status().message().c_str());
      return 77;
    }
    std::printf("%s: %s\n", device.value()->name(), device.value()->describe().c_str());
    return 0;
  }
  if (argc > 1 && std::strcmp(argv[1], "--plan") == 0) {
    std::string text, error;
    if (!myriad::tools::planDump(std::vector<std::string>(argv + 1, argv + argc), &text, &error)) {
      std::fprintf(stderr, "myriad-info: %s\nusage: %s", error.c_str(), myriad::tools::kPlanUsage);
      return 2;
    }
    std::fputs(text.c_str(), stdout);
    return 0;
  }
  if (argc > 1 && std::strcmp(argv[1], "--tune") == 0) {
    std::string text, error;
    if (!myriad::tools::tuneTable(std::vector<std::string>(argv + 1, argv + argc), &text, &error)) {
      std::fprintf(stderr, "myriad-info: %s\nusage: %s", error.c_str(), myriad::tools::kTuneUsage);
      return 2;
    }
    std::fputs(text.c_str(), stdout);
    return 0;
  }
  if (argc > 1 && std::strcmp(argv[1], "--tune-defaults") == 0) {
    std::fputs(myriad::writeTunerFile(myriad::TunerConstants::defaults()).c_str(), stdout);
    return 0;
  }
  if (argc > 1) {
    std::fprintf(
        stderr,
        "usage: myriad-info [--env | --algorithms | --devices | --tune-defaults | --plan ALGO ... | --tune ...]\n%s%s",
        myriad::tools::kPlanUsage, myriad::tools::kTuneUsage);
    return 2;
  }
  int v = 0;
  myrGetVersion(&v);
  std::printf("Myriad %d.%d.%d\n", v / 10000, v / 100 % 100, v % 100);
  auto config = myriad::Config::fromEnv();
  if (!config.isOk()) {
    std::fprintf(stderr, "myriad-info: %s\n", config.status().message().c_str());
    return 1;
  }
  std::printf("host id     : %s\n", myriad::localHostId(config.value()).c_str());
  std::printf("algorithms  :");
  for (const auto* a : myriad::allAlgorithms()) std::printf(" %s", a->name());
  std::printf("\ntransports  : shm tcp\n");
  return 0;
}
