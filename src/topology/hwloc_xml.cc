// Reads hwloc XML (placeholder until the reader lands).
#include "topology/xml_doc.h"

namespace myriad {

Result<Topology> readHwlocXml(const XmlDoc& doc) {
  return doc.error(doc.root(), "hwloc XML is not read yet");
}

}  // namespace myriad
