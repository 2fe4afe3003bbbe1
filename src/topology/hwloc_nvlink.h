// The NVLink part of hwloc XML: the "NVLinkBandwidth" distance matrices (distances2hetero, or distances2
// between GPUs only) turned into NVLink links. Internal to the hwloc reader.
#pragma once

#include <cstdint>
#include <map>

#include "topology/xml_doc.h"

namespace myriad {

// byGpIndex maps hwloc gp_index values to Topology node indices (OS devices map to their PCI function,
// packages to their first NUMA node). Entries in MB/s become links with gbps = MB/s / 1000; the link count
// stays 0 (unknown) because hwloc gives bandwidth only.
Status readHwlocNvlinks(const XmlDoc& doc, const std::map<uint64_t, int>& byGpIndex, Topology& topo);

}  // namespace myriad
