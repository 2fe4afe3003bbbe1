// unit tier: the communicator holds its machine's Topology: detected, or MYRIAD_TOPO_FILE (Config::topoFile)
// completed by detection; a file that does not load fails creation with a message naming it.
#include <gtest/gtest.h>

#include "core/comm.h"
#include "rendezvous/store.h"
#include "transports/factory.h"

namespace myriad {
namespace {

Result<std::unique_ptr<Comm>> oneRank(const std::string& topoFile, const std::string& tag) {
  CommSetup s;
  s.rank = 0;
  s.nranks = 1;
  s.store = std::make_shared<MemoryStore>();
  s.commTag = tag;
  s.config.topoFile = topoFile;
  s.openTransports = openTransports;
  return Comm::create(std::move(s));
}

TEST(CommTopology, DetectedWithoutAFile) {
  auto c = oneRank("", "topo-detect");
  ASSERT_TRUE(c.isOk()) << c.status().toString();
  EXPECT_GE(c.value()->topology().count(NodeKind::kCpu), 1);
}

#ifdef MYRIAD_HAVE_PUGIXML
TEST(CommTopology, TopoFileReplacesDetection) {
  std::string dir = MYRIAD_TOPO_FIXTURES;
  auto c = oneRank(dir + "/oci-bm-gpu-h100-8-nccl-topo.xml", "topo-file");
  ASSERT_TRUE(c.isOk()) << c.status().toString();
  EXPECT_EQ(c.value()->topology().count(NodeKind::kGpu), 8);
  EXPECT_EQ(c.value()->topology().count(NodeKind::kNvSwitch), 4);
  auto bad = oneRank(dir + "/azure-ncv4-a100pcie-nccl-graph.xml", "topo-bad");
  ASSERT_FALSE(bad.isOk());
  EXPECT_NE(bad.status().message().find("MYRIAD_TOPO_FILE"), std::string::npos) << bad.status().message();
  EXPECT_NE(bad.status().message().find("NCCL_GRAPH_FILE"), std::string::npos) << bad.status().message();
}
#endif

}  // namespace
}  // namespace myriad
