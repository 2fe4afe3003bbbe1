// loadTopologyFile and the format sniffer: the root element decides (<system> NCCL, <topology> hwloc,
// <graphs> an NCCL graph file, which is refused by name). Without pugixml every load is NotSupported.
#include "topology/topology_file.h"

#include <cerrno>
#include <fstream>
#include <sstream>

#ifdef MYRIAD_HAVE_PUGIXML
#include "topology/xml_doc.h"
#endif

namespace myriad {

Result<Topology> loadTopologyFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return systemError("topology file " + path + ": cannot open", errno);
  std::ostringstream text;
  text << in.rdbuf();
  if (in.bad()) return systemError("topology file " + path + ": read failed", errno);
  return parseTopology(text.str(), path);
}

#ifdef MYRIAD_HAVE_PUGIXML
Result<Topology> parseTopology(std::string_view text, const std::string& name) {
  MYR_ASSIGN_OR_RETURN(XmlDoc doc, XmlDoc::parse(text, name));
  std::string_view root = doc.root().name();
  if (root == "system") return readNcclXml(doc);
  if (root == "topology") return readHwlocXml(doc);
  if (root == "graphs") {
    return doc.error(doc.root(),
                     "<graphs> is an NCCL_GRAPH_FILE (ring/tree channels), not a topology: expected "
                     "<system> (NCCL topology XML) or <topology> (hwloc XML)");
  }
  return doc.error(doc.root(), "root element <" + std::string(root) +
                                   ">: expected <system> (NCCL topology XML) or <topology> (hwloc XML)");
}
#else
Result<Topology> parseTopology(std::string_view, const std::string& name) {
  return notSupported("topology file " + name + ": Myriad was built without pugixml");
}
#endif

}  // namespace myriad
