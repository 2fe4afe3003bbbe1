// PCIe, NVLink and CPU interconnect bandwidth tables. PCIe numbers are after 8b/10b (gen 1-2) or
// 128b/130b (gen 3+) encoding; NVLink numbers are the nominal per-direction rate of one link.
#include "topology/link_speed.h"

#include <array>
#include <charconv>

namespace myriad {
namespace {

struct PcieGen {
  double gtPerSecond;
  double gbpsPerLane;
  const char* name;
};
constexpr std::array<PcieGen, 6> kPcie = {{{2.5, 0.25, "2.5 GT/s PCIe"},
                                           {5.0, 0.5, "5.0 GT/s PCIe"},
                                           {8.0, 0.985, "8.0 GT/s PCIe"},
                                           {16.0, 1.969, "16.0 GT/s PCIe"},
                                           {32.0, 3.938, "32.0 GT/s PCIe"},
                                           {64.0, 7.877, "64.0 GT/s PCIe"}}};

}  // namespace

double pcieGbps(int gen, int width) {
  if (gen < 1 || gen > static_cast<int>(kPcie.size()) || width <= 0) return 0;
  return kPcie[gen - 1].gbpsPerLane * width;
}

int pcieGenFromSpeed(std::string_view speed) {
  while (!speed.empty() && speed.front() == ' ') speed.remove_prefix(1);
  double rate = 0;
  auto [end, ec] = std::from_chars(speed.data(), speed.data() + speed.size(), rate);
  if (ec != std::errc() || end == speed.data()) return 0;
  for (size_t i = 0; i < kPcie.size(); ++i) {
    if (rate > kPcie[i].gtPerSecond * 0.95 && rate < kPcie[i].gtPerSecond * 1.05) return static_cast<int>(i) + 1;
  }
  return 0;
}

const char* pcieSpeedName(int gen) {
  if (gen < 1 || gen > static_cast<int>(kPcie.size())) return "";
  return kPcie[gen - 1].name;
}

double nvlinkGbpsPerLink(int sm) {
  if (sm >= 100) return 50.0;  // NVLink 5 (Blackwell)
  if (sm >= 90) return 25.0;   // NVLink 4 (Hopper): 18 links, 450 GB/s per direction
  if (sm >= 80) return 25.0;   // NVLink 3 (Ampere): 12 links, 300 GB/s
  if (sm >= 70) return 25.0;   // NVLink 2 (Volta): 6 links, 150 GB/s
  if (sm >= 60) return 20.0;   // NVLink 1 (Pascal): 4 links, 80 GB/s
  return 0;
}

double cpuInterconnectGbps(std::string_view cpuVendor) {
  if (cpuVendor == "GenuineIntel") return 20.0;  // UPI, about 20 GB/s per direction per link
  if (cpuVendor == "AuthenticAMD") return 32.0;  // Infinity Fabric between sockets
  return 10.0;                                   // unknown: a conservative guess, said so
}

}  // namespace myriad
