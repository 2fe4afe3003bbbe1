// Unit tests of the rdma transport's pure parts (no device): MYRIAD_IB_HCA parsing and matching, GID
// choice from GID tables laid out as sysfs shows them (recorded fixtures, read through readGidTable from
// a temporary sysfs tree), the flow label <-> UDP source port arithmetic, and piece plans against the
// device's max message size.
#include "transports/rdma/ib_params.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <string>

#include "transports/rdma/ib_device.h"

namespace myriad {
namespace {

TEST(HcaList, EmptySelectsEverything) {
  auto f = parseHcaList("");
  ASSERT_TRUE(f.isOk());
  EXPECT_TRUE(hcaSelected(f.value(), "mlx5_0", 1));
  EXPECT_TRUE(hcaSelected(f.value(), "rxe0", 1));
}

TEST(HcaList, PrefixesAndPorts) {
  auto f = parseHcaList("mlx5_0:1,mlx5_1");
  ASSERT_TRUE(f.isOk()) << f.status().message();
  ASSERT_EQ(f.value().entries.size(), 2u);
  EXPECT_TRUE(hcaSelected(f.value(), "mlx5_0", 1));
  EXPECT_FALSE(hcaSelected(f.value(), "mlx5_0", 2));
  EXPECT_TRUE(hcaSelected(f.value(), "mlx5_1", 2));
  EXPECT_TRUE(hcaSelected(f.value(), "mlx5_10", 1));  // prefix match, as NCCL
  EXPECT_FALSE(hcaSelected(f.value(), "mlx5_2", 1));
}

TEST(HcaList, ExactAndExclude) {
  auto exact = parseHcaList("=mlx5_1");
  ASSERT_TRUE(exact.isOk());
  EXPECT_TRUE(hcaSelected(exact.value(), "mlx5_1", 1));
  EXPECT_FALSE(hcaSelected(exact.value(), "mlx5_10", 1));
  auto ex = parseHcaList("^rxe0");
  ASSERT_TRUE(ex.isOk());
  EXPECT_FALSE(hcaSelected(ex.value(), "rxe0", 1));
  EXPECT_TRUE(hcaSelected(ex.value(), "rxe1", 1));
  EXPECT_FALSE(hcaSelected(ex.value(), "rxe01", 1));  // prefix
  auto exEx = parseHcaList("^=rxe0:1");
  ASSERT_TRUE(exEx.isOk());
  EXPECT_TRUE(exEx.value().exclude && exEx.value().exact);
  EXPECT_FALSE(hcaSelected(exEx.value(), "rxe0", 1));
  EXPECT_TRUE(hcaSelected(exEx.value(), "rxe0", 2));
  EXPECT_TRUE(hcaSelected(exEx.value(), "rxe01", 1));
}

TEST(HcaList, MalformedEntriesAreErrors) {
  for (const char* bad : {"mlx5_0:", "mlx5_0:x", "mlx5_0:0", ":1", "mlx5_0:1:2"}) {
    auto f = parseHcaList(bad);
    EXPECT_FALSE(f.isOk()) << bad;
    if (!f.isOk()) {
      EXPECT_NE(f.status().message().find("MYRIAD_IB_HCA"), std::string::npos);
    }
  }
}

// Writes a fixture as a sysfs port (gids/<i>, gid_attrs/types/<i>) under a temporary root; returns the
// table length (highest index + 1, plus empty entries as the kernel shows them).
int writeSysfs(const std::string& fixture, const std::filesystem::path& root, const std::string& dev) {
  std::ifstream in(std::string(MYRIAD_RDMA_FIXTURES) + "/" + fixture);
  EXPECT_TRUE(in.good()) << fixture;
  auto port = root / dev / "ports" / "1";
  std::filesystem::create_directories(port / "gids");
  std::filesystem::create_directories(port / "gid_attrs" / "types");
  int length = 0;
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#') continue;
    std::istringstream ls(line);
    int index = 0;
    ls >> index;
    std::string rest;
    std::getline(ls, rest);
    size_t cut = rest.rfind(' ');
    std::string type = rest.substr(1, cut - 1), gid = rest.substr(cut + 1);
    std::ofstream(port / "gids" / std::to_string(index)) << gid << "\n";
    std::ofstream(port / "gid_attrs" / "types" / std::to_string(index)) << type << "\n";
    length = std::max(length, index + 1);
  }
  for (int i = length; i < length + 2; ++i)  // empty entries: zero GID, no type
    std::ofstream(port / "gids" / std::to_string(i)) << "0000:0000:0000:0000:0000:0000:0000:0000\n";
  return length + 2;
}

class GidTable : public testing::Test {
 protected:
  void SetUp() override {
    root_ = std::filesystem::temp_directory_path() / ("myriad-gids-" + std::to_string(getpid()));
    std::filesystem::remove_all(root_);
  }
  void TearDown() override { std::filesystem::remove_all(root_); }
  std::vector<GidEntry> load(const std::string& fixture) {
    int len = writeSysfs(fixture, root_, "dev0");
    return readGidTable(root_.string(), "dev0", 1, len);
  }
  std::filesystem::path root_;
};

TEST_F(GidTable, RoceV2PrefersIpv4Mapped) {
  auto t = load("mlx5-roce-dual-stack.gids");
  ASSERT_EQ(t.size(), 6u);  // the empty entries are left out
  EXPECT_EQ(t[5].type, "RoCE v2");
  auto g = pickGid(t, true, -1, 2);
  ASSERT_TRUE(g.isOk()) << g.status().message();
  EXPECT_EQ(g.value(), 5);
  EXPECT_EQ(gidToString(t[5].gid), "::ffff:192.168.1.23");
  auto v1 = pickGid(t, true, -1, 1);
  ASSERT_TRUE(v1.isOk());
  EXPECT_EQ(v1.value(), 4);
}

TEST_F(GidTable, GlobalIpv6BeforeLinkLocal) {
  auto t = load("mlx5-roce-dual-stack.gids");
  std::erase_if(t, [](const GidEntry& e) { return gidIsIpv4Mapped(e.gid); });
  auto g = pickGid(t, true, -1, 2);
  ASSERT_TRUE(g.isOk());
  EXPECT_EQ(g.value(), 3);
  std::erase_if(t, [](const GidEntry& e) { return e.index == 3; });
  EXPECT_EQ(pickGid(t, true, -1, 2).value(), 1);
}

TEST_F(GidTable, RecordedSoftRoceTables) {
  // rxe on a veth with IPv4 and its link-local IPv6 address, and on a dummy device with IPv4 only.
  auto veth = load("rxe-veth.gids");
  auto g = pickGid(veth, true, -1, 2);
  ASSERT_TRUE(g.isOk()) << g.status().message();
  auto chosen = std::find_if(veth.begin(), veth.end(), [&](const GidEntry& e) { return e.index == g.value(); });
  ASSERT_NE(chosen, veth.end());
  EXPECT_TRUE(gidIsIpv4Mapped(chosen->gid));
  EXPECT_EQ(chosen->type, "RoCE v2");
  std::filesystem::remove_all(root_);
  auto dummy = load("rxe-dummy.gids");
  auto d = pickGid(dummy, true, -1, 2);
  ASSERT_TRUE(d.isOk()) << d.status().message();
  EXPECT_EQ(d.value(), 1);
}

TEST_F(GidTable, ForcedIndexAndMissingVersion) {
  auto t = load("mlx5-roce-dual-stack.gids");
  EXPECT_EQ(pickGid(t, true, 2, 2).value(), 2);
  auto bad = pickGid(t, true, 9, 2);
  ASSERT_FALSE(bad.isOk());
  EXPECT_NE(bad.status().message().find("MYRIAD_IB_GID_INDEX=9"), std::string::npos) << bad.status().message();
  std::erase_if(t, [](const GidEntry& e) { return e.type == "RoCE v2"; });
  auto none = pickGid(t, true, -1, 2);
  ASSERT_FALSE(none.isOk());
  EXPECT_EQ(none.status().code(), Code::kNotSupported);
  EXPECT_NE(none.status().message().find("no RoCE v2 GID"), std::string::npos);
  EXPECT_EQ(pickGid({}, false, -1, 2).value(), 0);  // InfiniBand: index 0
}

TEST(Gid, ParseAndPrint) {
  std::array<uint8_t, 16> g{};
  EXPECT_TRUE(parseGid("0000:0000:0000:0000:0000:ffff:0a14:0001", &g));
  EXPECT_EQ(gidToString(g), "::ffff:10.20.0.1");
  EXPECT_FALSE(parseGid("0000:0000", &g));
  EXPECT_FALSE(parseGid("0000:0000:0000:0000:0000:ffff:0a14:0001x", &g));
  EXPECT_TRUE(parseGid("fe80:0000:0000:0000:0e42:a1ff:fe5c:7a10", &g));
  EXPECT_EQ(gidToString(g), "fe80:0000:0000:0000:0e42:a1ff:fe5c:7a10");
}

// The kernel's formula (rdma_flow_label_to_udp_sport), written out independently here.
uint16_t referencePort(uint32_t fl) {
  uint32_t lo = fl & 0x03fff, hi = (fl & 0xfc000) >> 14;
  return static_cast<uint16_t>((lo ^ hi) | 0xC000);
}

TEST(FlowLabel, PortArithmetic) {
  EXPECT_EQ(udpSourcePort(0), 0xC000);
  EXPECT_EQ(udpSourcePort(0x4001), 0xC000);
  EXPECT_EQ(udpSourcePort(0x12345), referencePort(0x12345));
  for (uint32_t fl = 0; fl < (1u << 20); fl += 7) ASSERT_EQ(udpSourcePort(fl), referencePort(fl)) << fl;
  for (uint32_t port = 0xC000; port <= 0xFFFF; ++port) {
    uint32_t fl = flowLabelForPort(static_cast<uint16_t>(port));
    ASSERT_NE(fl, 0u) << port;
    ASSERT_LT(fl, 1u << 20) << port;
    ASSERT_EQ(referencePort(fl), port) << fl;
  }
}

// Pieces cover [0, bytes) exactly once, each at most the piece size, the last one the remainder.
TEST(Pieces, CoverTheMessage) {
  const size_t kPiece = 64 << 10;
  for (size_t bytes : {size_t{0}, size_t{1}, size_t{4095}, kPiece - 1, kPiece, kPiece + 1, (size_t{20} << 20) + 5}) {
    SCOPED_TRACE("bytes=" + std::to_string(bytes));
    const size_t n = pieceCount(bytes, kPiece);
    size_t sum = 0;
    for (size_t k = 0; k < n; ++k) {
      const size_t len = pieceLength(bytes, kPiece, k);
      ASSERT_LE(len, kPiece);
      if (k + 1 < n) {
        ASSERT_EQ(len, kPiece);
      }
      if (bytes > 0) {
        ASSERT_GT(len, 0u);
      }
      sum += len;
    }
    EXPECT_EQ(sum, bytes);
    EXPECT_EQ(n, bytes == 0 ? 1 : (bytes - 1) / kPiece + 1);
  }
  EXPECT_EQ(pieceCount((size_t{20} << 20) + 5, size_t{8} << 20), 3u);  // rxe's 8 MiB limit: 8 + 8 + 4 MiB + 5
  EXPECT_EQ(pieceLength((size_t{20} << 20) + 5, size_t{8} << 20, 2), (size_t{4} << 20) + 5);
}

}  // namespace
}  // namespace myriad
