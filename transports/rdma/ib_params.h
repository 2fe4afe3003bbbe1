// Pure functions of the rdma transport, free of verbs so that unit tests run without a device: the
// MYRIAD_IB_HCA list (NCCL's syntax), GID choice from a port's GID table, the RoCEv2 flow label <-> UDP
// source port arithmetic, and how a message is cut into pieces over a peer's QPs. Invariant: both ends of a
// connection compute the same piece plan from (bytes, QPs, max message size, message sequence number).
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "base/status.h"

namespace myriad {

// "mlx5_0:1,mlx5_1": devices (optionally with a port); a leading ^ excludes them instead, a leading =
// (after the ^, if any) asks for exact names instead of prefixes. "" selects every device, "^" none.
struct HcaFilter {
  struct Entry {
    std::string name;
    int port = -1;  // -1: any port
  };
  bool exclude = false;
  bool exact = false;
  std::vector<Entry> entries;  // empty: every device
};
Result<HcaFilter> parseHcaList(const std::string& text);
bool hcaSelected(const HcaFilter& filter, const std::string& device, int port);

// One entry of a port's GID table as sysfs shows it (gids/<i> and gid_attrs/types/<i>).
struct GidEntry {
  int index = 0;
  std::string type;  // "RoCE v2", "IB/RoCE v1"
  std::array<uint8_t, 16> gid{};
};
bool gidIsZero(const std::array<uint8_t, 16>& gid);
bool gidIsIpv4Mapped(const std::array<uint8_t, 16>& gid);
// "0000:0000:0000:0000:0000:ffff:0a14:0001" (sysfs) -> bytes; false when malformed.
bool parseGid(const std::string& text, std::array<uint8_t, 16>* out);
std::string gidToString(const std::array<uint8_t, 16>& gid);
// The GID index to use: `forced` >= 0 must name a non-zero entry; otherwise the first entry of RoCE version
// `rocev` (1 or 2) preferring IPv4-mapped, then global IPv6, then link-local. On an InfiniBand port
// (`roce` false) index 0. An error says what the table held.
Result<int> pickGid(const std::vector<GidEntry>& table, bool roce, int forced, int rocev);

// RoCEv2: the UDP source port that a QP with flow label `fl` sends from, and a flow label for a wanted
// port (ports 0xC000..0xFFFF; the label is never 0, which would mean "no label").
uint16_t udpSourcePort(uint32_t flowLabel);
uint32_t flowLabelForPort(uint16_t port);
// The pieces of a message: the receiver chooses the piece size (its clear-to-send carries it) and counts
// the pieces; piece k is bytes [k * pieceBytes, min(bytes, (k + 1) * pieceBytes)). A 0-byte message is one
// 0-byte piece.
size_t pieceCount(size_t bytes, size_t pieceBytes);
size_t pieceLength(size_t bytes, size_t pieceBytes, size_t k);

}  // namespace myriad
