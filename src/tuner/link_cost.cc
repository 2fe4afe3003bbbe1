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

// shm and tcp are fitted by benchmarks/fit-tuner to the sweep of docs/design/tuning.md (2-vCPU VM, 2-8 ranks
// on 1-3 emulated hosts sharing its two cores, so they are per-rank values under that load): on shm a
// message costs its sender and its receiver ~3 µs of CPU each and ~2 µs of latency, and a rank moves
// ~1.2 GB/s; tcp over loopback between emulated hosts ~17.5 µs of CPU at each end (the system calls), ~1 µs
// of latency beyond that, ~1 GB/s. Float sums ~3.5 GB/s, copies ~8 GB/s (the fit is indifferent to copies;
// this is a memcpy's order of magnitude here). The others are order-of-magnitude values for hardware this
// machine does not have (RoCE/IB NICs, NVLink, PCIe, a copy through host memory), overheads included:
// calibrate them with MYRIAD_TUNER_FILE where they matter.
TunerConstants TunerConstants::defaults() {
  TunerConstants k;
  k.link(LinkClass::kShm) = {2, 1.2, 3};
  k.link(LinkClass::kTcp) = {1, 1, 17.5};
  k.link(LinkClass::kRdma) = {4, 10, 1};
  k.link(LinkClass::kNvlink) = {2, 100, 1};
  k.link(LinkClass::kPcie) = {3, 12, 1};
  k.link(LinkClass::kHostStaging) = {5, 6, 1.5};
  k.reduceGbps = 3.5;
  k.copyGbps = 8;
  k.callUs = 20;
  return k;
}

}  // namespace myriad
