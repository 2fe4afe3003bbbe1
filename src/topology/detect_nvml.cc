// GPUs through NVML, opened with dlopen so that one binary runs with and without the NVIDIA driver: bus
// ids, compute capability and, per NVLink that is up, its remote end (a GPU, an NVSwitch, or the CPU).
// The few NVML entry points used are declared here with the driver's ABI (nvml.h, v2/v3 entry points).
#include <dlfcn.h>

#include <map>

#include "topology/detect_internal.h"
#include "topology/link_speed.h"
#include "topology/pci.h"

namespace myriad::detail {
namespace {

using NvmlDevice = struct NvmlDeviceOpaque*;
struct NvmlPciInfo {
  char busIdLegacy[16];
  unsigned domain, bus, device, pciDeviceId, pciSubSystemId;
  char busId[32];
};
constexpr int kNvmlMaxLinks = 18;  // NVML_NVLINK_MAX_LINKS

struct Nvml {
  void* lib = nullptr;
  int (*init)() = nullptr;
  int (*shutdown)() = nullptr;
  int (*count)(unsigned*) = nullptr;
  int (*handle)(unsigned, NvmlDevice*) = nullptr;
  int (*pci)(NvmlDevice, NvmlPciInfo*) = nullptr;
  int (*capability)(NvmlDevice, int*, int*) = nullptr;
  int (*linkState)(NvmlDevice, unsigned, int*) = nullptr;
  int (*remotePci)(NvmlDevice, unsigned, NvmlPciInfo*) = nullptr;
  int (*remoteType)(NvmlDevice, unsigned, int*) = nullptr;  // optional: NVML_NVLINK_DEVICE_TYPE_*

  template <typename F>
  bool sym(F& f, const char* name) {
    f = reinterpret_cast<F>(dlsym(lib, name));
    return f != nullptr;
  }
};

std::string busIdOf(const NvmlPciInfo& p) {
  // NVML spells "00000000:0F:00.0" (8-digit domain); Topology keeps 4 digits as Linux does.
  std::string s = p.busId;
  if (s.size() == 16 && s.rfind("0000", 0) == 0) s = s.substr(4);
  return normalizeBusId(s).value_or("");
}

}  // namespace

void nvmlGpus(Detection& d) {
  Nvml n;
  n.lib = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!n.lib) {
    d.notes.push_back(std::string("NVML: no GPU (libnvidia-ml.so.1 not loadable: ") + dlerror() + ")");
    return;
  }
  bool ok = n.sym(n.init, "nvmlInit_v2") && n.sym(n.shutdown, "nvmlShutdown") &&
            n.sym(n.count, "nvmlDeviceGetCount_v2") && n.sym(n.handle, "nvmlDeviceGetHandleByIndex_v2") &&
            n.sym(n.pci, "nvmlDeviceGetPciInfo_v3") && n.sym(n.capability, "nvmlDeviceGetCudaComputeCapability") &&
            n.sym(n.linkState, "nvmlDeviceGetNvLinkState") && n.sym(n.remotePci, "nvmlDeviceGetNvLinkRemotePciInfo_v2");
  n.sym(n.remoteType, "nvmlDeviceGetNvLinkRemoteDeviceType");
  unsigned count = 0;
  if (!ok) {
    d.notes.push_back("NVML: library lacks the v2/v3 entry points; GPUs not detected");
  } else if (int rc = n.init(); rc != 0) {
    d.notes.push_back("NVML: nvmlInit failed (" + std::to_string(rc) + "): no GPU detected");
    ok = false;
  } else if (n.count(&count) != 0) {
    d.notes.push_back("NVML: device count failed");
    count = 0;
  }
  std::map<int, std::vector<std::pair<std::string, bool>>> remotes;  // GPU node -> (remote bus id, is switch)
  for (unsigned i = 0; ok && i < count; ++i) {
    NvmlDevice dev = nullptr;
    NvmlPciInfo pci{};
    if (n.handle(i, &dev) != 0 || n.pci(dev, &pci) != 0) continue;
    std::string bus = busIdOf(pci);
    int node = bus.empty() ? -1 : ensurePciNode(d.topo, bus);
    if (node < 0) continue;
    Node& g = d.topo.nodes[node];
    g.kind = NodeKind::kGpu;
    g.gpuIndex = static_cast<int>(i);
    int major = 0, minor = 0;
    if (n.capability(dev, &major, &minor) == 0) g.sm = major * 10 + minor;
    for (unsigned l = 0; l < kNvmlMaxLinks; ++l) {
      int active = 0;
      NvmlPciInfo rp{};
      if (n.linkState(dev, l, &active) != 0 || !active || n.remotePci(dev, l, &rp) != 0) continue;
      int type = -1;  // 0 GPU, 1 IBMNPU (CPU), 2 switch
      if (n.remoteType) n.remoteType(dev, l, &type);
      remotes[node].emplace_back(busIdOf(rp), type == 2);
    }
  }
  // One Link per (GPU, remote end) with the number of links to it.
  for (const auto& [gpu, ends] : remotes) {
    std::map<std::string, std::pair<int, bool>> perEnd;
    for (const auto& [bus, isSwitch] : ends) {
      perEnd[bus].first++;
      perEnd[bus].second = perEnd[bus].second || isSwitch;
    }
    for (const auto& [bus, e] : perEnd) {
      int other = d.topo.findBusId(bus);
      if (other < 0 && e.second) {
        Node s;
        s.kind = NodeKind::kNvSwitch;
        s.busId = bus;
        other = d.topo.add(std::move(s));
      }
      if (other < 0 || other == gpu || d.topo.nvlinkBetween(gpu, other)) continue;
      Link l;
      l.kind = LinkKind::kNvlink;
      l.a = gpu;
      l.b = other;
      l.count = e.first;
      l.gbps = e.first * nvlinkGbpsPerLink(d.topo.nodes[gpu].sm);
      d.topo.links.push_back(l);
    }
  }
  if (ok) {
    d.notes.push_back("NVML: " + std::to_string(count) + " GPUs");
    n.shutdown();
  }
  dlclose(n.lib);
}

}  // namespace myriad::detail
