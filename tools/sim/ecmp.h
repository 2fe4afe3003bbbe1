// ECMP as a switch does it: a flow's 5-tuple hashed with the switch's seed picks one of its equal-cost
// uplinks. Two flows collide exactly when their hashes agree modulo the uplink count; switches that share a
// seed make the same choice for the same flow (polarisation).
#pragma once

#include <cstdint>

namespace myriad::netsim {

struct FiveTuple {
  uint32_t srcAddr = 0;  // the sending NIC's address (the simulator numbers NICs)
  uint32_t dstAddr = 0;
  uint16_t srcPort = 0;  // chosen per path by the library's PathSet
  uint16_t dstPort = 0;
  uint8_t proto = 0;
};

// A 64-bit finaliser (splitmix64's) applied to the packed tuple and the seed.
uint64_t mix64(uint64_t x);
uint64_t ecmpHash(const FiveTuple& t, uint64_t seed);
// Which of `n` uplinks (n > 0) the switch with `seed` sends the flow on.
int ecmpPick(const FiveTuple& t, uint64_t seed, int n);

}  // namespace myriad::netsim
