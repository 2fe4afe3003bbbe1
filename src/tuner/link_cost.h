// The cost model's constants: per link class a latency α, a per-message CPU overhead o at each end and a
// bandwidth (β = 1/bandwidth), LogGP's L, o and G; and the
// throughput of the reductions and copies a rank does itself. Defaults are for the development machine
// (shm and tcp over loopback between emulated hosts); MYRIAD_TUNER_FILE overrides any of them.
#pragma once

#include <array>
#include <cstddef>
#include <string>

namespace myriad {

// The kinds of link a message can cross. Open: a new transport adds its class here, a default below and a
// name in linkClassName; the calibration file names classes by that name.
enum class LinkClass : int { kShm, kTcp, kRdma, kNvlink, kPcie, kHostStaging };
constexpr int kLinkClasses = 6;
const char* linkClassName(LinkClass c);  // "shm", "tcp", "rdma", "nvlink", "pcie", "host_staging"

struct LinkCost {
  double alphaUs = 0;     // latency: from a message's last byte leaving the sender to its arrival; overlaps
  double gbps = 1;        // streaming bandwidth in GB/s (10^9 bytes per second) of one rank's link
  double overheadUs = 0;  // CPU time a message holds its sender's egress, and again its receiver's ingress
  double wireUs(size_t bytes) const { return static_cast<double>(bytes) / (gbps * 1e3); }
};

struct TunerConstants {
  std::array<LinkCost, kLinkClasses> links{};
  double reduceGbps = 6;  // bytes of the destination reduced per second by one rank (reduce, recv-reduce)
  double copyGbps = 8;    // local copies and scaling
  double callUs = 0;      // fixed per call, the same for every algorithm (only in absolute predictions)

  const LinkCost& link(LinkClass c) const { return links[static_cast<size_t>(c)]; }
  LinkCost& link(LinkClass c) { return links[static_cast<size_t>(c)]; }
  static TunerConstants defaults();
};

}  // namespace myriad
