// The default constants of the cost model and the names of the link classes.
#include "tuner/link_cost.h"

namespace myriad {

const char* linkClassName(LinkClass c) {
  switch (c) {
    case LinkClass::kShm: return "shm";
    case LinkClass::kTcp: return "tcp";
    case LinkClass::kRdma: return "rdma";
    case LinkClass::kNvlink: return "nvlink";
    case LinkClass::kPcie: return "pcie";
    case LinkClass::kHostStaging: return "host_staging";
  }
  return "?";
}

// shm and tcp are fitted to docs/design/tuning.md's measurements on a 2-vCPU VM with 3-8 ranks sharing its
// two cores (so they are per-rank values under that load): a message through the shm FIFO costs ~30 µs to
// wake the peer and its rank moves ~2 GB/s through the cache; tcp over loopback between emulated hosts
// ~60 µs per message and ~1 GB/s. Reductions of float sums ~6 GB/s, copies ~8 GB/s. The others are order-of-magnitude
// values for hardware this machine does not have (RoCE/IB NICs, NVLink, PCIe, a copy through host memory):
// calibrate them with MYRIAD_TUNER_FILE where they matter.
TunerConstants TunerConstants::defaults() {
  TunerConstants k;
  k.link(LinkClass::kShm) = {30, 2};
  k.link(LinkClass::kTcp) = {60, 1};
  k.link(LinkClass::kRdma) = {6, 10};
  k.link(LinkClass::kNvlink) = {3, 100};
  k.link(LinkClass::kPcie) = {5, 12};
  k.link(LinkClass::kHostStaging) = {8, 6};
  k.reduceGbps = 6;
  k.copyGbps = 8;
  k.callUs = 20;
  return k;
}

}  // namespace myriad
