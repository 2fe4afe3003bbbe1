// The source ports of one rank pair's paths, chosen by the library's own multipath PathSet (no I/O in it):
// P active paths, no spares, the default port range, a seed per pair derived from the simulation seed. The
// library seeds each connection's PathSet from its options; the simulator's per-pair seed stands for that.
#pragma once

#include <cstdint>
#include <vector>

namespace myriad::netsim {

// The seed of the pair's PathSet.
uint64_t pathSeed(uint64_t seed, int src, int dst);
std::vector<uint16_t> pathPorts(uint64_t seed, int src, int dst, int paths);

}  // namespace myriad::netsim
