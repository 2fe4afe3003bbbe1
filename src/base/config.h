// Config: every MYRIAD_* environment variable, declared once in one table (config.cc), read once into an
// immutable value that is passed down. Nothing else in Myriad calls getenv for a MYRIAD_ variable.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>

#include "base/status.h"

namespace myriad {

struct EnvVarSpec {
  const char* name;
  const char* type;  // "int", "bool", "size", "string", "enum(a|b|c)"
  const char* defaultValue;
  const char* doc;
};

// The table, in the order the docs print it.
std::span<const EnvVarSpec> envTable();
// Markdown table of every variable (docs/environment.md is generated from it).
std::string envTableMarkdown();

// The multipath defaults (MYRIAD_NET_SPLIT_BYTES, MYRIAD_NET_CHUNK_BYTES, MYRIAD_NET_INFLIGHT_BYTES), named once
// for the transports and the simulator.
inline constexpr size_t kDefaultNetSplitBytes = 512 << 10;
inline constexpr size_t kDefaultNetChunkBytes = 64 << 10;
inline constexpr size_t kDefaultNetInflightBytes = 512 << 10;

struct Config {
  // Logging
  std::string debugLevel = "WARN";
  std::string debugSubsys = "ALL";
  std::string debugFile;
  // Failure detection
  int timeoutMs = 1800000;  // late ranks (docs/failures.md)
  int initTimeoutMs = 60000;
  int heartbeatMs = 200;  // 0: no liveness channel
  int peerDeadMs = 2000;
  int stallTimeoutMs = 60000;
  int stallReportS = 30;
  // Topology and transports
  std::string hostId;
  bool disableShm = false;
  std::string shmMode = "fifo";
  size_t shmSlotBytes = 64 << 10;
  int shmSlots = 8;
  size_t deviceSlotBytes = 4 << 20;
  int deviceSlots = 4;
  std::string socketIfname;
  size_t socketBufferBytes = 4 << 20;
  // RDMA (transports/rdma)
  std::string net = "auto";
  std::string ibHca;
  int ibGidIndex = -1;
  int ibRoceVersion = 2;
  int ibTc = 0;
  int ibSl = 0;
  int ibTimeout = 20;
  int ibRetryCnt = 7;
  int ibQpsPerPeer = 1;
  bool ibRegCache = false;
  // Algorithms
  std::string algo;
  std::string tunerFile;    // MYRIAD_TUNER_FILE: cost-model constants (src/tuner/tuner_file.h)
  std::string tunerPlugin;  // MYRIAD_TUNER_PLUGIN: a tuner_v1 shared library
  size_t chunkBytes = 128 << 10;
  // Device memory: auto, cuda, host (the host-backed stand-in), none (src/device/select.cc)
  std::string device = "auto";
  // Rendezvous from launcher environments
  std::string commId;
  std::string commSecret;  // never logged
  // Topology
  std::string topoFile;
  // Multipath (transports/multipath)
  int netPaths = 4;
  bool netPathsAuto = true;  // MYRIAD_NET_PATHS=auto: netPaths paths that stand down when they measure alike
  bool netAdaptive = true;
  size_t netSplitBytes = kDefaultNetSplitBytes;
  size_t netChunkBytes = kDefaultNetChunkBytes;
  size_t netInflightBytes = kDefaultNetInflightBytes;
  bool netCoupled = false;
  std::string netPorts;
  int netListenPort = 0;
  uint64_t netSeed = 0;
  // Flight record (core/flight_record.h)
  int flightRecord = 256;
  std::string dumpOnError;

  // Reads every variable in the table; a malformed value is an InvalidArgument naming the variable.
  static Result<Config> fromEnv();
};

}  // namespace myriad
