// pathPorts: PathSet::addPath(active) as the multipath connection calls it when it opens its paths.
#include "tools/sim/path_ports.h"

#include "tools/sim/ecmp.h"
#include "transports/multipath/path_set.h"

namespace myriad::netsim {

uint64_t pathSeed(uint64_t seed, int src, int dst) {
  const uint64_t pair = uint64_t(static_cast<uint32_t>(src)) << 32 | static_cast<uint32_t>(dst);
  return mix64(seed ^ mix64(pair));
}

std::vector<uint16_t> pathPorts(uint64_t seed, int src, int dst, int paths) {
  mp::PathSet set(paths, 0, mp::PortRange{}, pathSeed(seed, src, dst));
  std::vector<uint16_t> out;
  for (int p = 0; p < paths; ++p) out.push_back(set.path(set.addPath(true)).port);
  return out;
}

}  // namespace myriad::netsim
