// Shared peer parts. The option checks print in the driver's "program: message" form, and exit code 2 is
// the caller's, as for a bad flag.
#include "benchmarks/peers/peer.h"

#include <cstdio>

#include "tests/common/dtype_values.h"

namespace myriad::bench {

std::vector<std::string> peerCallNames(const std::vector<PeerCall>& calls) {
  std::vector<std::string> names;
  for (const PeerCall& c : calls) names.emplace_back(c.flag);
  return names;
}

const PeerCall& chosenCall(const std::vector<PeerCall>& calls, const Options& o) {
  for (const PeerCall& c : calls) {
    if (o.collective == c.flag) return c;
  }
  return calls.front();
}

bool checkPeerOptions(const char* program, const std::vector<myrDataType_t>& types, Options* o) {
  auto fail = [&](const std::string& message) {
    std::fprintf(stderr, "%s: %s\n", program, message.c_str());
    return false;
  };
  if (!o->algo.empty()) return fail("-A: Myriad's algorithms only; a peer's variants are -c names");
  if (o->hosts > 1) return fail("--hosts: Myriad's emulated hosts only");
  for (myrDataType_t t : o->types) {
    bool known = false;
    for (myrDataType_t s : types) known = known || s == t;
    if (!known) return fail(std::string("-d ") + test::dataTypeName(t) + ": not supported by this peer");
  }
  for (myrRedOp_t op : o->ops) {
    if (op == myrAvg) return fail("-o avg: not supported by this peer");
  }
  o->blocking = true;
  return true;
}

int runPeerRank(const Collective& coll, const Options& o, const RunDescription& run, RankOps& ops, bool* failed) {
  double wrongTotal = 0;
  std::string error;
  *failed = !runSweep(coll, o, run, ops, &wrongTotal, &error);
  if (*failed) {
    std::fprintf(stderr, "%s: rank %d: %s\n", run.program.c_str(), ops.rank(), error.c_str());
    return 1;
  }
  return wrongTotal > 0 ? 1 : 0;
}

}  // namespace myriad::bench
