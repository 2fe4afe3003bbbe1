// Link bandwidths from what files and drivers report: PCIe generation x width, NVLink count x per-link
// bandwidth of the GPU generation, and the CPU-to-CPU interconnect. All values are GB/s per direction.
#pragma once

#include <string_view>

namespace myriad {

// Per-direction GB/s of a PCIe link after line encoding; 0 for an unknown generation or width.
double pcieGbps(int gen, int width);
// The generation from a link speed spelling: "16.0 GT/s PCIe", "32 GT/s PCIe/s", "8 GT/s", "" (0: unknown).
int pcieGenFromSpeed(std::string_view speed);
// The canonical NCCL spelling of a generation ("16.0 GT/s PCIe"); "" for 0.
const char* pcieSpeedName(int gen);
// Per-link, per-direction NVLink GB/s for a GPU of compute capability sm (x10); 0 when unknown.
double nvlinkGbpsPerLink(int sm);
// A nominal CPU-to-CPU interconnect bandwidth by CPU vendor (UPI/Infinity Fabric class numbers).
double cpuInterconnectGbps(std::string_view cpuVendor);

}  // namespace myriad
