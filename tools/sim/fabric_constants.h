// The simulator's default fabric and machine constants, in one place (docs/simulator.md explains each).
// Every one can be overridden through FabricSpec; these are round numbers for a current cluster, not
// measurements of any particular one.
#pragma once

#include <cstdint>

namespace myriad::netsim {

// One NIC port and every switch-to-switch link: 100 Gb/s, in bytes per second.
inline constexpr double kDefaultLinkBytesPerSec = 100e9 / 8;
// One hop's latency (serialisation of the first bytes, cable, switch pipeline), seconds; a message pays it
// once per link on its path.
inline constexpr double kDefaultLinkLatency = 1e-6;
// Ranks of one host: each rank's outgoing shared-memory / NVLink copy engine, bytes per second, and the
// one-way latency of a message between two ranks of a host.
inline constexpr double kDefaultIntraBytesPerSec = 100e9;
inline constexpr double kDefaultIntraLatency = 0.5e-6;
// Memory bandwidth of one rank for reduce, copy and scale steps (bytes touched per second).
inline constexpr double kDefaultMemBytesPerSec = 50e9;
// Bytes one connection carries ahead of the receives posted for them (per pair and direction): the socket
// buffers at its two ends, which the library's tcp transport sets to MYRIAD_SOCKET_BUFFER_BYTES (4 MiB)
// each. A message that does not fit waits for its receive (rendezvous).
inline constexpr double kDefaultEagerBytes = 8.0 * (1 << 20);
// Destination port of every inter-host flow (the library's listening port is chosen at start-up; a fixed
// value stands for it, since only its presence in the 5-tuple hash matters).
inline constexpr uint16_t kDefaultDstPort = 29500;
inline constexpr uint8_t kProtoTcp = 6;

}  // namespace myriad::netsim
