// ECMP hashing: the tuple is packed into two words, each folded through the finaliser with the seed.
#include "tools/sim/ecmp.h"

namespace myriad::netsim {

uint64_t mix64(uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

uint64_t ecmpHash(const FiveTuple& t, uint64_t seed) {
  uint64_t addrs = (uint64_t{t.srcAddr} << 32) | t.dstAddr;
  uint64_t rest = (uint64_t{t.srcPort} << 24) | (uint64_t{t.dstPort} << 8) | t.proto;
  return mix64(mix64(addrs ^ mix64(seed)) ^ rest);
}

int ecmpPick(const FiveTuple& t, uint64_t seed, int n) {
  return static_cast<int>(ecmpHash(t, seed) % static_cast<uint64_t>(n));
}

}  // namespace myriad::netsim
