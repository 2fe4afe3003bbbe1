// The topology readers (NCCL topology XML and hwloc XML, topology/topology_file.h) on arbitrary text, as a
// user's MYRIAD_TOPO_FILE may be. A topology that reads is one the rest of the library can use (paths
// between every pair of nodes) and that survives being written as NCCL XML and read back unchanged (up to the order of
// a GPU's NVLinks).
#include <algorithm>
#include <sstream>
#include <vector>

#include "fuzz_check.h"
#include "topology/paths.h"
#include "topology/topology_file.h"

namespace {

// The written text with each GPU's <nvlink> lines in one order: reading back may find a GPU's links in
// another order (an NVLink between two GPUs is listed under both), which is the same topology.
std::string canonical(const std::string& xml) {
  std::istringstream in(xml);
  std::vector<std::string> lines, run;
  auto flush = [&] {
    std::sort(run.begin(), run.end());
    lines.insert(lines.end(), run.begin(), run.end());
    run.clear();
  };
  for (std::string line; std::getline(in, line);) {
    if (line.find("<nvlink ") != std::string::npos) {
      run.push_back(line);
      continue;
    }
    flush();
    lines.push_back(line);
  }
  flush();
  std::string out;
  for (const std::string& l : lines) out += l + "\n";
  return out;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  auto topo = myriad::parseTopology(text, "fuzz.xml");
  if (!topo.isOk()) {
    FUZZ_CHECK(topo.status().message().find("fuzz.xml") != std::string::npos, "a refusal names the file");
    return 0;
  }
  const myriad::Topology& t = topo.value();
  const int n = static_cast<int>(t.nodes.size());
  for (int a = 0; a < n && a < 64; ++a)
    for (int b = 0; b < n && b < 64; ++b) (void)myriad::pathName(myriad::pathBetween(t, a, b));
  (void)myriad::preferredNics(t);
  const std::string written = myriad::writeNcclXml(t);
  auto back = myriad::parseTopology(written, "written.xml");
  FUZZ_CHECK(back.isOk(), back.isOk() ? "" : back.status().message().c_str());
  FUZZ_CHECK(canonical(myriad::writeNcclXml(back.value())) == canonical(written),
             "what is written reads back as written");
  return 0;
}
