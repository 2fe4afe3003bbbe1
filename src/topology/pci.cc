// Bus id normalisation and class-code classification for the NCCL and hwloc readers.
#include "topology/pci.h"

#include <cctype>

namespace myriad {
namespace {

bool isHex(char c) {
  return std::isxdigit(static_cast<unsigned char>(c)) != 0;
}

// Checks that text[pos..pos+n) are hex digits.
bool hexRun(std::string_view text, size_t pos, size_t n) {
  if (pos + n > text.size()) return false;
  for (size_t i = pos; i < pos + n; ++i) {
    if (!isHex(text[i])) return false;
  }
  return true;
}

}  // namespace

std::optional<std::string> normalizeBusId(std::string_view busId) {
  size_t colon = busId.find(':');
  if (colon == std::string_view::npos || colon < 1 || colon > 8 || !hexRun(busId, 0, colon)) return std::nullopt;
  // After the domain: "bb:dd.f", exactly 7 characters.
  std::string_view rest = busId.substr(colon + 1);
  if (rest.size() != 7 || !hexRun(rest, 0, 2) || rest[2] != ':' || !hexRun(rest, 3, 2) || rest[5] != '.' ||
      !hexRun(rest, 6, 1)) {
    return std::nullopt;
  }
  std::string out(busId);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

NodeKind pciKind(uint32_t pciClass, uint16_t vendor, bool hasPciChildren) {
  if (hasPciChildren || (pciClass >> 8) == 0x0604) return NodeKind::kPciSwitch;
  if ((pciClass >> 16) == 0x03 && (vendor == 0 || vendor == kNvidiaVendor)) return NodeKind::kGpu;
  if ((pciClass >> 16) == 0x02) return NodeKind::kNic;
  if ((pciClass >> 8) == 0x0680) return NodeKind::kNvSwitch;
  return NodeKind::kPciDevice;
}

std::optional<uint32_t> parseHex(std::string_view text, uint32_t max) {
  if (text.size() > 2 && text[0] == '0' && (text[1] == 'x' || text[1] == 'X')) text.remove_prefix(2);
  if (text.empty() || text.size() > 8) return std::nullopt;
  uint64_t v = 0;
  for (char c : text) {
    if (!isHex(c)) return std::nullopt;
    v = v * 16 + static_cast<uint64_t>(std::isdigit(static_cast<unsigned char>(c)) ? c - '0' : (c | 0x20) - 'a' + 10);
  }
  if (v > max) return std::nullopt;
  return static_cast<uint32_t>(v);
}

}  // namespace myriad
