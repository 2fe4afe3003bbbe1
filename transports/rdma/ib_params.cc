// HCA list parsing, GID choice, flow label arithmetic and piece plans (see ib_params.h).
#include "transports/rdma/ib_params.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>

namespace myriad {

Result<HcaFilter> parseHcaList(const std::string& text) {
  HcaFilter f;
  size_t pos = 0;
  if (pos < text.size() && text[pos] == '^') f.exclude = true, ++pos;
  if (pos < text.size() && text[pos] == '=') f.exact = true, ++pos;
  while (pos < text.size()) {
    size_t comma = text.find(',', pos);
    if (comma == std::string::npos) comma = text.size();
    std::string item = text.substr(pos, comma - pos);
    pos = comma + 1;
    if (item.empty()) continue;
    HcaFilter::Entry e;
    size_t colon = item.find(':');
    e.name = item.substr(0, colon);
    if (colon != std::string::npos) {
      std::string port = item.substr(colon + 1);
      char* end = nullptr;
      long p = std::strtol(port.c_str(), &end, 10);
      if (port.empty() || *end != '\0' || p < 1 || p > 255)
        return invalidArgument("MYRIAD_IB_HCA='" + text + "': '" + item + "' has no valid port number");
      e.port = static_cast<int>(p);
    }
    if (e.name.empty()) return invalidArgument("MYRIAD_IB_HCA='" + text + "': an entry has no device name");
    f.entries.push_back(std::move(e));
  }
  return f;
}

bool hcaSelected(const HcaFilter& f, const std::string& device, int port) {
  if (f.entries.empty()) return !f.exclude;  // "" selects every device, "^" none
  bool listed = false;
  for (const auto& e : f.entries) {
    bool nameOk = f.exact ? device == e.name : device.rfind(e.name, 0) == 0;
    if (nameOk && (e.port < 0 || e.port == port)) listed = true;
  }
  return listed != f.exclude;
}

bool gidIsZero(const std::array<uint8_t, 16>& gid) {
  for (uint8_t b : gid)
    if (b) return false;
  return true;
}

bool gidIsIpv4Mapped(const std::array<uint8_t, 16>& gid) {
  for (int i = 0; i < 10; ++i)
    if (gid[static_cast<size_t>(i)]) return false;
  return gid[10] == 0xff && gid[11] == 0xff;
}

bool parseGid(const std::string& text, std::array<uint8_t, 16>* out) {
  unsigned w[8];
  char tail = 0;
  if (std::sscanf(text.c_str(), "%4x:%4x:%4x:%4x:%4x:%4x:%4x:%4x%c", &w[0], &w[1], &w[2], &w[3], &w[4], &w[5], &w[6],
                  &w[7], &tail) < 8)
    return false;
  if (tail != 0 && tail != '\n') return false;
  for (int i = 0; i < 8; ++i) {
    (*out)[static_cast<size_t>(2 * i)] = static_cast<uint8_t>(w[i] >> 8);
    (*out)[static_cast<size_t>(2 * i + 1)] = static_cast<uint8_t>(w[i]);
  }
  return true;
}

std::string gidToString(const std::array<uint8_t, 16>& gid) {
  if (gidIsIpv4Mapped(gid))
    return "::ffff:" + std::to_string(gid[12]) + "." + std::to_string(gid[13]) + "." + std::to_string(gid[14]) + "." +
           std::to_string(gid[15]);
  char buf[48];
  std::snprintf(buf, sizeof(buf), "%02x%02x:%02x%02x:%02x%02x:%02x%02x:%02x%02x:%02x%02x:%02x%02x:%02x%02x", gid[0],
                gid[1], gid[2], gid[3], gid[4], gid[5], gid[6], gid[7], gid[8], gid[9], gid[10], gid[11], gid[12],
                gid[13], gid[14], gid[15]);
  return buf;
}

namespace {
// Lower is better: IPv4-mapped, global IPv6, link-local (fe80::/10).
int familyRank(const std::array<uint8_t, 16>& gid) {
  if (gidIsIpv4Mapped(gid)) return 0;
  if (gid[0] == 0xfe && (gid[1] & 0xc0) == 0x80) return 2;
  return 1;
}

std::string describeTable(const std::vector<GidEntry>& table) {
  std::string s;
  for (const auto& e : table) {
    if (gidIsZero(e.gid)) continue;
    s += (s.empty() ? "" : ", ") + std::to_string(e.index) + " " + gidToString(e.gid) + " (" + e.type + ")";
  }
  return s.empty() ? "no non-zero GID" : s;
}
}  // namespace

Result<int> pickGid(const std::vector<GidEntry>& table, bool roce, int forced, int rocev) {
  if (forced >= 0) {
    for (const auto& e : table)
      if (e.index == forced && !gidIsZero(e.gid)) return forced;
    return invalidArgument("MYRIAD_IB_GID_INDEX=" + std::to_string(forced) + " names no GID of the port (it has " +
                           describeTable(table) + ")");
  }
  if (!roce) return 0;
  const std::string want = rocev == 1 ? "IB/RoCE v1" : "RoCE v2";
  int best = -1, bestRank = 99;
  for (const auto& e : table) {
    if (gidIsZero(e.gid) || e.type != want) continue;
    int r = familyRank(e.gid);
    if (r < bestRank) best = e.index, bestRank = r;
  }
  if (best >= 0) return best;
  return notSupported("no " + want + " GID on the port (it has " + describeTable(table) +
                      "); does the netdev have an IP address? MYRIAD_IB_ROCE_VERSION / MYRIAD_IB_GID_INDEX choose");
}

uint16_t udpSourcePort(uint32_t fl) {
  return static_cast<uint16_t>(0xC000 | ((fl & 0x3fff) ^ ((fl >> 14) & 0x3fff)));
}

uint32_t flowLabelForPort(uint16_t port) {
  uint32_t low = port & 0x3fff;
  // Label bits 14..19 are free: 0 keeps the label equal to the port's low bits, 1 avoids the label 0.
  return low != 0 ? low : (uint32_t{1} << 14) | 1;
}

size_t pieceCount(size_t bytes, size_t pieceBytes) {
  if (pieceBytes == 0) pieceBytes = 1;
  return bytes == 0 ? 1 : (bytes + pieceBytes - 1) / pieceBytes;
}

size_t pieceLength(size_t bytes, size_t pieceBytes, size_t k) {
  const size_t begin = std::min(bytes, k * pieceBytes);
  return std::min(bytes - begin, pieceBytes);
}

}  // namespace myriad
