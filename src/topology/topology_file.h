// Topology files: load NCCL topology XML or hwloc XML (the format is sniffed from the content) and write
// NCCL topology XML. Every error names the file, the line and what was expected; no input crashes.
#pragma once

#include <string>
#include <string_view>

#include "base/status.h"
#include "topology/topology.h"

namespace myriad {

// Reads the file at path and parses it with parseTopology.
Result<Topology> loadTopologyFile(const std::string& path);
// NCCL XML (<system>) or hwloc XML (<topology>) from text; `name` is used in error messages. An
// NCCL_GRAPH_FILE (<graphs>) is rejected as not a topology. NotSupported when built without pugixml.
Result<Topology> parseTopology(std::string_view text, const std::string& name);
// NCCL topology XML that parseTopology reads back into an equal Topology.
std::string writeNcclXml(const Topology& topo);

}  // namespace myriad
