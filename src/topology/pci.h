// PCI facts shared by the file readers: bus id spelling and what a PCI function is from its class code.
// Invariant: every bus id stored in a Topology went through normalizeBusId (lower case, dddd:bb:dd.f).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "topology/topology.h"

namespace myriad {

constexpr uint16_t kNvidiaVendor = 0x10de;

// "0000:0F:00.0" -> "0000:0f:00.0"; a domain of 1-8 hex digits is accepted; nullopt when malformed.
std::optional<std::string> normalizeBusId(std::string_view busId);
// The kind of a PCI function from its 24-bit class, its vendor (0: unknown) and whether it has PCI
// children. Only NVIDIA (or unknown-vendor) display controllers count as GPUs.
NodeKind pciKind(uint32_t pciClass, uint16_t vendor, bool hasPciChildren);
// Parses hex with an optional 0x prefix ("0x030200", "1d0f"); nullopt when malformed or too large.
std::optional<uint32_t> parseHex(std::string_view text, uint32_t max);

}  // namespace myriad
