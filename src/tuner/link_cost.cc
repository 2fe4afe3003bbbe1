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
// on 1-3 emulated hosts sharing its two cores, priced with the CPU bound of cost_model.h for that machine):
// on shm a message costs its sender and its receiver ~9.7 µs of CPU each, and a rank moves ~1.2 GB/s; tcp
// over loopback between emulated hosts ~12.2 µs of CPU at each end (the system calls), ~0.85 GB/s. The fit
// puts a message's whole fixed cost in overhead (latency ~0: with ranks sharing cores, waiting is CPU time
// too); 0.1 µs is kept. Float sums ~4.9 GB/s, copies ~8 GB/s (the fit is indifferent to copies; this is a
// memcpy's order of magnitude here). The others are order-of-magnitude values for hardware this
// machine does not have (RoCE/IB NICs, NVLink, PCIe, a copy through host memory), overheads included:
// calibrate them with MYRIAD_TUNER_FILE where they matter.
TunerConstants TunerConstants::defaults() {
  TunerConstants k;
  k.link(LinkClass::kShm) = {0.1, 1.2, 9.7};
  k.link(LinkClass::kTcp) = {0.1, 0.85, 12.2};
  k.link(LinkClass::kRdma) = {4, 10, 1};
  k.link(LinkClass::kNvlink) = {2, 100, 1};
  k.link(LinkClass::kPcie) = {3, 12, 1};
  k.link(LinkClass::kHostStaging) = {5, 6, 1.5};
  k.reduceGbps = 4.9;
  k.copyGbps = 8;
  k.callUs = 20;
  return k;
}

}  // namespace myriad
