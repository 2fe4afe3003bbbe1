// hwloc detection: hwloc discovers packages, NUMA nodes, the PCI tree (bridges kept where they lead to an
// important device) and OS devices; its XML export goes through the same reader as hwloc files, so a live
// machine and `lstopo machine.xml` of it give the same Topology.
#include "topology/detect_internal.h"

#if defined(MYRIAD_HAVE_HWLOC) && defined(MYRIAD_HAVE_PUGIXML)
#include <hwloc.h>

#include "topology/topology_file.h"
#endif

namespace myriad::detail {

#if defined(MYRIAD_HAVE_HWLOC) && defined(MYRIAD_HAVE_PUGIXML)
Result<Topology> hwlocTopology() {
  hwloc_topology_t t = nullptr;
  if (hwloc_topology_init(&t) != 0) return systemError("hwloc: topology init failed", errno);
  hwloc_topology_set_io_types_filter(t, HWLOC_TYPE_FILTER_KEEP_IMPORTANT);
#if HWLOC_API_VERSION >= 0x00020100
  // Not the X display (gl) or OpenCL plugins: GPUs come from NVML, and those plugins open displays and
  // driver stacks. Not the libpciaccess plugin (pci) either: hwloc's Linux backend reads the same PCI tree
  // from sysfs, while libpciaccess took seconds here and never freed what it allocated (seen under ASan).
  for (const char* c : {"gl", "opencl", "pci"})
    hwloc_topology_set_components(t, HWLOC_TOPOLOGY_COMPONENTS_FLAG_BLACKLIST, c);
#endif
  if (hwloc_topology_load(t) != 0) {
    int e = errno;
    hwloc_topology_destroy(t);
    return systemError("hwloc: topology load failed", e);
  }
  char* xml = nullptr;
  int len = 0;
  int rc = hwloc_topology_export_xmlbuffer(t, &xml, &len, 0);
  std::string text;
  if (rc == 0 && xml) {
    text.assign(xml, len > 0 ? static_cast<size_t>(len - 1) : 0);  // len counts the final NUL
    hwloc_free_xmlbuffer(t, xml);
  }
  hwloc_topology_destroy(t);
  if (rc != 0 || text.empty()) return systemError("hwloc: XML export failed", errno);
  return parseTopology(text, "hwloc export of this machine");
}
#else
Result<Topology> hwlocTopology() {
  return notSupported("hwloc: Myriad was built without hwloc or without pugixml");
}
#endif

}  // namespace myriad::detail
