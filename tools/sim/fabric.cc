// Fabric: link numbering (NIC up, NIC down, leaf up, spine down, intra-host, each kind contiguous) and
// routing.
#include "tools/sim/fabric.h"

#include <algorithm>

namespace myriad::netsim {

const char* linkKindName(LinkKind k) {
  switch (k) {
    case LinkKind::kNicUp: return "nic-up";
    case LinkKind::kNicDown: return "nic-down";
    case LinkKind::kLeafUp: return "leaf-up";
    case LinkKind::kSpineDown: return "spine-down";
    case LinkKind::kIntra: return "intra";
  }
  return "?";
}

Result<Fabric> Fabric::make(const FabricSpec& s) {
  auto bad = [](const std::string& what) { return invalidArgument("fabric: " + what); };
  if (s.nranks < 1) return bad("--ranks must be at least 1, not " + std::to_string(s.nranks));
  if (s.ranksPerHost < 1 || s.nranks % s.ranksPerHost)
    return bad("--ranks-per-host " + std::to_string(s.ranksPerHost) + " must divide --ranks " +
               std::to_string(s.nranks));
  if (s.rails < 1 || s.rails > s.ranksPerHost)
    return bad("--rails " + std::to_string(s.rails) + " must be between 1 and --ranks-per-host");
  if (s.hostsPerLeaf < 1) return bad("--hosts-per-leaf must be at least 1");
  if (s.spines < 1) return bad("--spines must be at least 1");
  if (!(s.nicBytesPerSec > 0 && s.spineBytesPerSec > 0 && s.intraBytesPerSec > 0 && s.memBytesPerSec > 0))
    return bad("every bandwidth must be positive");
  if (!(s.linkLatency >= 0 && s.intraLatency >= 0)) return bad("latencies must not be negative");
  Fabric f;
  f.spec_ = s;
  f.hosts_ = s.nranks / s.ranksPerHost;
  f.leaves_ = (f.hosts_ + s.hostsPerLeaf - 1) / s.hostsPerLeaf;
  const int nics = f.hosts_ * s.rails;
  auto add = [&](LinkKind k, int count, int per, double cap, double lat) {
    int first = static_cast<int>(f.links_.size());
    for (int i = 0; i < count; ++i) f.links_.push_back({k, per ? i / per : i, per ? i % per : 0, cap, lat});
    return first;
  };
  f.nicUp_ = add(LinkKind::kNicUp, nics, 0, s.nicBytesPerSec, s.linkLatency);
  f.nicDown_ = add(LinkKind::kNicDown, nics, 0, s.nicBytesPerSec, s.linkLatency);
  f.leafUp_ = add(LinkKind::kLeafUp, f.leaves_ * s.spines, s.spines, s.spineBytesPerSec, s.linkLatency);
  f.spineDown_ = add(LinkKind::kSpineDown, f.leaves_ * s.spines, s.spines, s.spineBytesPerSec, s.linkLatency);
  f.intra_ = add(LinkKind::kIntra, s.nranks, 0, s.intraBytesPerSec, s.intraLatency);
  return f;
}

uint64_t Fabric::leafSeed(int leaf) const {
  return spec_.sameLeafSeeds ? mix64(spec_.seed) : mix64(spec_.seed ^ (uint64_t(leaf) << 32 | 0x5eedu));
}

std::string Fabric::linkName(int l) const {
  const Link& k = links_[static_cast<size_t>(l)];
  switch (k.kind) {
    case LinkKind::kNicUp: return "nic " + std::to_string(k.a) + " -> leaf";
    case LinkKind::kNicDown: return "leaf -> nic " + std::to_string(k.a);
    case LinkKind::kLeafUp: return "leaf " + std::to_string(k.a) + " -> spine " + std::to_string(k.b);
    case LinkKind::kSpineDown: return "spine " + std::to_string(k.b) + " -> leaf " + std::to_string(k.a);
    case LinkKind::kIntra: return "rank " + std::to_string(k.a) + " intra-host";
  }
  return "?";
}

void Fabric::fail(int link) {
  if (dead_.empty()) dead_.assign(links_.size(), 0);
  dead_[static_cast<size_t>(link)] = 1;
}

bool Fabric::crossesDead(const Route& r) const {
  return std::any_of(r.links.begin(), r.links.end(), [&](int l) { return dead(l); });
}

FiveTuple Fabric::tuple(int src, int dst, uint16_t srcPort) const {
  return {static_cast<uint32_t>(nicOf(src)), static_cast<uint32_t>(nicOf(dst)), srcPort, kDefaultDstPort, kProtoTcp};
}

Route Fabric::route(int src, int dst, uint16_t srcPort) const {
  Route r;
  if (hostOf(src) == hostOf(dst)) {
    r.links.push_back(intra_ + src);
    r.latency = spec_.intraLatency;
    return r;
  }
  const int sn = nicOf(src), dn = nicOf(dst);
  const int sl = leafOf(hostOf(src)), dl = leafOf(hostOf(dst));
  r.links.push_back(nicUp_ + sn);
  if (sl != dl) {
    const FiveTuple t = tuple(src, dst, srcPort);
    r.spine = ecmpPick(t, leafSeed(sl), spec_.spines);
    if (dead(leafUp(sl, r.spine)) || dead(spineDown(r.spine, dl))) {
      std::vector<int> alive;
      for (int s = 0; s < spec_.spines; ++s)
        if (!dead(leafUp(sl, s)) && !dead(spineDown(s, dl))) alive.push_back(s);
      if (!alive.empty())
        r.spine = alive[static_cast<size_t>(ecmpPick(t, leafSeed(sl), static_cast<int>(alive.size())))];
    }
    r.links.push_back(leafUp(sl, r.spine));
    r.links.push_back(spineDown(r.spine, dl));
  }
  r.links.push_back(nicDown_ + dn);
  r.latency = spec_.linkLatency * static_cast<double>(r.links.size());
  return r;
}

}  // namespace myriad::netsim
