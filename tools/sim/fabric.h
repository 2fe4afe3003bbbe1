// Fabric: a two-tier leaf-spine network and the hosts on it. Hosts hold G ranks each and R NICs (rails; NIC
// r serves the local ranks r mod R), every NIC of a host on the host's leaf; leaves hold H hosts each and
// one uplink to each of S spines. Links are one-directional with a capacity and a latency; ranks of one
// host talk over their own link class (each rank's outgoing shared-memory / NVLink engine), never the NIC.
// The uplink a flow takes from its leaf is ECMP's choice (ecmp.h), with a seed per leaf.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "base/status.h"
#include "tools/sim/ecmp.h"
#include "tools/sim/fabric_constants.h"

namespace myriad::netsim {

struct FabricSpec {
  int nranks = 8;
  int ranksPerHost = 1;
  int rails = 1;
  int hostsPerLeaf = 4;
  int spines = 4;
  double nicBytesPerSec = kDefaultLinkBytesPerSec;
  double spineBytesPerSec = kDefaultLinkBytesPerSec;  // leaf-spine links: lower it to oversubscribe
  double linkLatency = kDefaultLinkLatency;
  double intraBytesPerSec = kDefaultIntraBytesPerSec;
  double intraLatency = kDefaultIntraLatency;
  double memBytesPerSec = kDefaultMemBytesPerSec;
  uint64_t seed = 1;
  bool sameLeafSeeds = false;  // every leaf hashes with the same seed (polarisation)
};

enum class LinkKind : uint8_t { kNicUp, kNicDown, kLeafUp, kSpineDown, kIntra };
const char* linkKindName(LinkKind k);

struct Link {
  LinkKind kind;
  int a = 0, b = 0;  // NIC or rank and the switch side; see Fabric::linkName
  double capacity = 0;
  double latency = 0;
};

struct Route {
  std::vector<int> links;
  double latency = 0;
  int spine = -1;  // the spine ECMP chose, -1 when the flow stays in its leaf or host
};

class Fabric {
 public:
  static Result<Fabric> make(const FabricSpec& spec);

  const FabricSpec& spec() const { return spec_; }
  int hosts() const { return hosts_; }
  int leaves() const { return leaves_; }
  int hostOf(int rank) const { return rank / spec_.ranksPerHost; }
  int leafOf(int host) const { return host / spec_.hostsPerLeaf; }
  // The NIC (0 .. hosts*rails-1) that carries a rank's inter-host traffic; also its address in the 5-tuple.
  int nicOf(int rank) const { return hostOf(rank) * spec_.rails + (rank % spec_.ranksPerHost) % spec_.rails; }
  uint64_t leafSeed(int leaf) const;

  const std::vector<Link>& links() const { return links_; }
  std::string linkName(int link) const;
  int leafUp(int leaf, int spine) const { return leafUp_ + leaf * spec_.spines + spine; }
  int spineDown(int spine, int leaf) const { return spineDown_ + leaf * spec_.spines + spine; }

  // Divides a link's capacity by `factor` (> 1: degraded optics, a link stepped down).
  void degrade(int link, double factor) { links_[static_cast<size_t>(link)].capacity /= factor; }
  // A link fails: from now on ECMP hashes over the spines whose links from the source leaf and to the
  // destination leaf are both alive (resilient hashing: a flow whose spine lives keeps it).
  void fail(int link);
  bool dead(int link) const { return !dead_.empty() && dead_[static_cast<size_t>(link)]; }
  // Whether `r` crosses a failed link (no spine was left alive between its leaves).
  bool crossesDead(const Route& r) const;

  // The path from rank src to rank dst for a flow with this source port.
  Route route(int src, int dst, uint16_t srcPort) const;
  FiveTuple tuple(int src, int dst, uint16_t srcPort) const;

 private:
  FabricSpec spec_;
  int hosts_ = 0, leaves_ = 0;
  int nicUp_ = 0, nicDown_ = 0, leafUp_ = 0, spineDown_ = 0, intra_ = 0;  // first index of each kind
  std::vector<Link> links_;
  std::vector<char> dead_;  // by link; empty while none failed
};

}  // namespace myriad::netsim
