// main() of every myriad_<collective>_perf binary: the build names the collective (MYRIAD_PERF_COLLECTIVE,
// the file stem of its table, e.g. "all_reduce") and this runs its table through the shared driver.
#include <cstdio>
#include <cstring>

#include "benchmarks/common/bench_main.h"
#include "benchmarks/common/collectives.h"

int main(int argc, char** argv) {
  using namespace myriad::bench;
  for (const Collective* c :
       {&kAllReduce, &kAllGather, &kReduceScatter, &kBroadcast, &kReduce, &kAllToAll, &kSendRecv}) {
    if (std::strcmp(c->name, MYRIAD_PERF_COLLECTIVE) == 0) return benchMain(argc, argv, *c);
  }
  std::fprintf(stderr, "no benchmark table named %s in this build\n", MYRIAD_PERF_COLLECTIVE);
  return 2;
}
