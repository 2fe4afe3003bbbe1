// The one table of MYRIAD_* environment variables and the code that reads it.
#include "base/config.h"

#include <cerrno>
#include <cstdlib>
#include <cstring>

namespace myriad {
namespace {
constexpr int kAutoNetPaths = 4;  // MYRIAD_NET_PATHS=auto

constexpr EnvVarSpec kEnv[] = {
    {"MYRIAD_DEBUG", "enum(NONE|WARN|INFO|TRACE)", "WARN", "Log level."},
    {"MYRIAD_DEBUG_SUBSYS", "string", "ALL",
     "Comma-separated subsystems to log: INIT,BOOT,NET,SHM,COLL,TUNE,ALL; a leading ^ excludes the list."},
    {"MYRIAD_DEBUG_FILE", "string", "", "Log to this file instead of stderr; %h becomes the host name, %p the pid."},
    {"MYRIAD_TIMEOUT_MS", "int", "1800000",
     "How long a call waits for ranks that are alive but have not entered it (late: a checkpoint, a data-loader "
     "stall) before it fails with myrTimeout; 30 minutes, as Gloo. Dead and stuck ranks are caught sooner "
     "(MYRIAD_PEER_DEAD_MS, MYRIAD_STALL_TIMEOUT_MS). With MYRIAD_HEARTBEAT_MS=0 it is the silence after which "
     "a waiting call fails, whatever the cause. See docs/failures.md."},
    {"MYRIAD_HEARTBEAT_MS", "int", "200",
     "Period of the liveness channel's heartbeats (a UDP socket and a thread per communicator, each rank "
     "watched by at most five others and by the ranks of its host through pidfds); 0 turns the channel off."},
    {"MYRIAD_PEER_DEAD_MS", "int", "2000",
     "A watched rank that sends no heartbeat for this long is declared unresponsive and every rank's "
     "communicator fails naming it; an exit seen through a pidfd is declared at once."},
    {"MYRIAD_STALL_TIMEOUT_MS", "int", "60000",
     "A call fails as stuck when the ranks it waits on have entered it (or are inside other calls) but no data "
     "has moved for this long; the error names the chain of waiters and its end."},
    {"MYRIAD_STALL_REPORT_S", "int", "30",
     "While a call waits without data moving, it logs one line this often naming whom it waits on and what "
     "each last entered; 0: never."},
    {"MYRIAD_INIT_TIMEOUT_MS", "int", "60000", "Deadline of the rendezvous in myrCommInitRank."},
    {"MYRIAD_HOST_ID", "string", "",
     "Overrides the host identity (boot id, hostname, network namespace) that groups ranks into nodes."},
    {"MYRIAD_DISABLE_SHM", "bool", "0", "1: ranks on the same host talk over tcp instead of shared memory."},
    {"MYRIAD_SHM_MODE", "enum(fifo|cma|auto)", "fifo",
     "Shared-memory data path: fifo (copied through a small shared ring that stays in cache), cma (messages "
     "read once from the sender's memory with process_vm_readv), auto (cma for messages of 64 KiB and more "
     "where the kernel permits it). fifo measured fastest on small-core machines; see docs/design/shm.md."},
    {"MYRIAD_SHM_SLOT_BYTES", "size", "65536", "Bytes of one slot of a shared-memory FIFO (a multiple of 64)."},
    {"MYRIAD_SHM_SLOTS", "int", "8", "Slots per shared-memory FIFO (one FIFO per connected rank pair)."},
    {"MYRIAD_DEVICE_SLOT_BYTES", "size", "4194304",
     "Device memory: bytes of one inbox slot (a multiple of 256); a message to a peer of the host moves in "
     "pieces of at most this size."},
    {"MYRIAD_DEVICE_SLOTS", "int", "4", "Device memory: inbox slots per rank pair and direction."},
    {"MYRIAD_SOCKET_IFNAME", "string", "",
     "Network interface (or address prefix) for tcp and the rendezvous; default: the first non-loopback "
     "interface that is up, else loopback."},
    {"MYRIAD_SOCKET_BUFFER_BYTES", "size", "4194304", "SO_SNDBUF/SO_RCVBUF of data sockets; 0 keeps the kernel's."},
    {"MYRIAD_NET", "enum(auto|rdma|tcp)", "auto",
     "Network transport between ranks that shared memory does not reach: rdma (RoCE/InfiniBand verbs; init fails, "
     "saying why, when no device works), tcp, or auto (rdma where both ranks have a working device, else tcp)."},
    {"MYRIAD_IB_HCA", "string", "",
     "RDMA devices to use, NCCL's syntax: mlx5_0:1,mlx5_1 (device prefixes, optional port), a leading ^ "
     "excludes the list, a leading = matches names exactly; default: every device with an active port."},
    {"MYRIAD_IB_GID_INDEX", "int", "-1",
     "GID index of the RoCE port; -1 picks one of MYRIAD_IB_ROCE_VERSION, IPv4-mapped first."},
    {"MYRIAD_IB_ROCE_VERSION", "int", "2", "RoCE version (1 or 2) of the GID picked when MYRIAD_IB_GID_INDEX is -1."},
    {"MYRIAD_IB_TC", "int", "0", "Traffic class of RDMA packets (RoCE: DSCP << 2 | ECN)."},
    {"MYRIAD_IB_SL", "int", "0", "Service level of RDMA QPs."},
    {"MYRIAD_IB_TIMEOUT", "int", "20",
     "ACK timeout exponent of RC QPs (4.096 us * 2^value); emulated links (qemu, Soft-RoCE) need 18-20."},
    {"MYRIAD_IB_RETRY_CNT", "int", "7", "Retransmissions of an unacknowledged RDMA packet before the QP fails."},
    {"MYRIAD_IB_QPS_PER_PEER", "int", "1",
     "Active RC QPs per connected peer, plus 2 connected spares, each with its own flow label (so its own UDP "
     "source port, an ECMP path); message pieces are pulled by the active QPs (see MYRIAD_NET_ADAPTIVE)."},
    {"MYRIAD_IB_REG_CACHE", "bool", "0",
     "1: keep the memory registrations of unregistered user buffers for reuse. Unsafe when the application frees "
     "and reallocates such buffers without myrCommDeregister telling Myriad; 0 registers them per message. "
     "Buffers registered with myrCommRegister are registered once either way."},
    {"MYRIAD_ALGO", "string", "",
     "Forces algorithms by registry name, a comma list with at most one per collective (allreduce.tree,alltoall.hier); "
     "a name that is unknown or cannot run a call makes that call fail with myrInvalidUsage."},
    {"MYRIAD_TUNER_FILE", "string", "",
     "Calibration of the tuner's cost model: a text file of `key value` lines (shm.alpha_us 4, "
     "shm.overhead_us 2, tcp.gbps 1.5, reduce.gbps 3, ...) that overrides the default per-link constants "
     "(docs/design/tuning.md); "
     "`myriad-info --tune-defaults` prints the defaults in that form. A malformed file makes calls fail with "
     "myrInvalidArgument naming the file and line."},
    {"MYRIAD_TUNER_PLUGIN", "string", "",
     "A shared library exporting myriadTunerPlugin_v1 (include/myriad/plugin/tuner_v1.h) that may override the "
     "cost model's choice; a library that cannot be loaded or misbehaves is logged as a warning and the model "
     "chooses. MYRIAD_ALGO still comes first."},
    {"MYRIAD_CHUNK_BYTES", "size", "131072",
     "Pipelining chunk of the ring algorithms (small enough to stay in cache)."},
    {"MYRIAD_DEVICE", "enum(auto|cuda|host|none)", "auto",
     "The device that collectives on device memory run on: cuda (a GPU through the CUDA driver), host (the "
     "host-backed device: CUDA stream semantics on the CPU, memory in shared pages; the stand-in the tests run "
     "the device path on without a GPU), auto (cuda where the build has CUDA and the machine a GPU, else no device), "
     "none (no device: calls "
     "on device memory fail)."},
    {"MYRIAD_COMM_ID", "string", "",
     "host:port of the rendezvous root, for launchers that cannot pass a unique id: every rank calls "
     "myrGetUniqueId and gets the same id, and rank 0 listens there from myrCommInitRank on."},
    {"MYRIAD_COMM_SECRET", "string", "",
     "Shared secret for MYRIAD_COMM_ID rendezvous, derived into the communicator's key with PBKDF2-HMAC-SHA256 "
     "(docs/security.md); without it the secret is derived from public information and only guards against "
     "accidents, not attackers."},
    {"MYRIAD_TOPO_FILE", "string", "",
     "NCCL topology XML or hwloc XML file describing this machine, used instead of detection (what it leaves "
     "out, such as NIC speeds or NVLinks, is still detected); see docs/topology.md."},
    {"MYRIAD_NET_PATHS", "int|auto", "auto",
     "Paths per tcp peer: flows with distinct, chosen source ports (distinct ECMP hashes) that messages are "
     "spread over (docs/design/multipath.md); 1: one plain connection per peer, no chunking. auto: 4 paths "
     "that stand down (spares closed, no re-paths, said at INFO) once every path has measured alike for a "
     "while, a link without collisions or a fabric that sprays packets itself, and stand up again when a path "
     "falls behind."},
    {"MYRIAD_NET_ADAPTIVE", "bool", "1",
     "1: paths (tcp lanes, rdma QPs) pull chunks as they have room, slow paths are re-pathed (new source port; "
     "rdma: a spare QP) and stuck tcp chunks re-sent; 0: a static even split over the paths (like NCCL's)."},
    {"MYRIAD_NET_SPLIT_BYTES", "size", "524288", "Messages above this size are cut into chunks over several paths."},
    {"MYRIAD_NET_CHUNK_BYTES", "size", "65536",
     "Size of the chunks of a split message (rdma: of the pieces a receiver asks for, at most the device's "
     "max message size)."},
    {"MYRIAD_NET_INFLIGHT_BYTES", "size", "524288",
     "Cap on unacknowledged bytes toward one peer over all its paths, so that N paths do not act like N greedy "
     "flows toward other tenants (rdma: split evenly over the active QPs, at least one piece each)."},
    {"MYRIAD_NET_COUPLED", "bool", "0",
     "1: each tcp path's bytes in flight are held to a congestion window coupled across the peer's paths (RFC "
     "6356's linked increases; a retransmission the kernel reports halves the path's window), so that paths "
     "sharing one bottleneck compete as about one flow; 0: every path up to the lane cap. Off by default until "
     "it measurably does that (docs/design/multipath.md, T8)."},
    {"MYRIAD_NET_PORTS", "string", "",
     "Source ports of the paths: a range lo-hi to choose from (default 32768-60999), or a comma list used "
     "first, in order (benchmarks pin paths to spines with it). RoCEv2 can only use 49152-65535: rdma cuts "
     "the range to it and rejects a listed port below it."},
    {"MYRIAD_NET_LISTEN_PORT", "int", "0",
     "Fixed tcp listening port (0: any), so that a path's 5-tuple is known in advance; one rank per address."},
    {"MYRIAD_NET_SEED", "int", "0", "Seed of the path choice and the control loop's coin flips; 0: random."},
    {"MYRIAD_FLIGHT_RECORD", "int", "256",
     "Calls each communicator keeps in its flight record (op, sizes, algorithm, peers, times, outcome), which "
     "myrCommDump and MYRIAD_DUMP_ON_ERROR write as JSON for myriad-trace (docs/failures.md); 0 keeps none."},
    {"MYRIAD_DUMP_ON_ERROR", "string", "",
     "A directory: a communicator that records its first error writes its flight record there, once, as "
     "myriad-<host>-<pid>-rank<r>.json; empty: no dumps."},
};

const EnvVarSpec& spec(const char* name) {
  for (const auto& e : kEnv)
    if (std::strcmp(e.name, name) == 0) return e;
  assertFailed(name, __FILE__, __LINE__);  // a variable read here must be in the table
}

std::string raw(const char* name) {
  const char* v = std::getenv(name);
  return v ? std::string(v) : std::string(spec(name).defaultValue);
}

Status parseInt(const char* name, long long lo, long long hi, long long* out) {
  std::string s = raw(name);
  char* end = nullptr;
  errno = 0;
  long long v = std::strtoll(s.c_str(), &end, 10);
  if (s.empty() || *end != '\0' || errno != 0 || v < lo || v > hi)
    return invalidArgument(std::string(name) + "='" + s + "' is not an integer in [" + std::to_string(lo) + ", " +
                           std::to_string(hi) + "]");
  *out = v;
  return Status::ok();
}

Status readInt(const char* name, int lo, int hi, int* out) {
  long long v = 0;
  MYR_TRY(parseInt(name, lo, hi, &v));
  *out = static_cast<int>(v);
  return Status::ok();
}

// Sizes accept K, M, G suffixes (powers of 1024).
Status readSize(const char* name, size_t* out) {
  std::string s = raw(name);
  size_t mult = 1;
  if (!s.empty()) {
    char last = s.back();
    if (last == 'K' || last == 'k') mult = size_t{1} << 10;
    if (last == 'M' || last == 'm') mult = size_t{1} << 20;
    if (last == 'G' || last == 'g') mult = size_t{1} << 30;
    if (mult != 1) s.pop_back();
  }
  char* end = nullptr;
  errno = 0;
  unsigned long long v = std::strtoull(s.c_str(), &end, 10);
  if (s.empty() || *end != '\0' || errno != 0 || s[0] == '-')
    return invalidArgument(std::string(name) + "='" + raw(name) + "' is not a size (bytes, or with K/M/G)");
  *out = static_cast<size_t>(v) * mult;
  return Status::ok();
}

Status readBool(const char* name, bool* out) {
  std::string s = raw(name);
  if (s == "1" || s == "true" || s == "yes" || s == "on") return *out = true, Status::ok();
  if (s == "0" || s == "false" || s == "no" || s == "off" || s.empty()) return *out = false, Status::ok();
  return invalidArgument(std::string(name) + "='" + s + "' is not a boolean (0/1)");
}

Status readEnum(const char* name, std::string* out) {
  std::string s = raw(name);
  std::string type = spec(name).type;  // enum(a|b|c)
  std::string choices = type.substr(5, type.size() - 6);
  size_t pos = 0;
  while (pos <= choices.size()) {
    size_t bar = choices.find('|', pos);
    if (bar == std::string::npos) bar = choices.size();
    if (choices.compare(pos, bar - pos, s) == 0 && s.size() == bar - pos) return *out = s, Status::ok();
    pos = bar + 1;
  }
  return invalidArgument(std::string(name) + "='" + s + "' is not one of " + choices);
}

}  // namespace

std::span<const EnvVarSpec> envTable() {
  return kEnv;
}

std::string envTableMarkdown() {
  std::string md = "| variable | type | default | meaning |\n|---|---|---|---|\n";
  for (const auto& e : kEnv)
    md += std::string("| `") + e.name + "` | " + e.type + " | `" + e.defaultValue + "` | " + e.doc + " |\n";
  return md;
}

Result<Config> Config::fromEnv() {
  Config c;
  MYR_TRY(readEnum("MYRIAD_DEBUG", &c.debugLevel));
  c.debugSubsys = raw("MYRIAD_DEBUG_SUBSYS");
  c.debugFile = raw("MYRIAD_DEBUG_FILE");
  MYR_TRY(readInt("MYRIAD_TIMEOUT_MS", 1, 86400000, &c.timeoutMs));
  MYR_TRY(readInt("MYRIAD_INIT_TIMEOUT_MS", 1, 86400000, &c.initTimeoutMs));
  MYR_TRY(readInt("MYRIAD_HEARTBEAT_MS", 0, 60000, &c.heartbeatMs));
  MYR_TRY(readInt("MYRIAD_PEER_DEAD_MS", 100, 86400000, &c.peerDeadMs));
  MYR_TRY(readInt("MYRIAD_STALL_TIMEOUT_MS", 1, 86400000, &c.stallTimeoutMs));
  MYR_TRY(readInt("MYRIAD_STALL_REPORT_S", 0, 86400, &c.stallReportS));
  if (c.heartbeatMs > 0 && c.peerDeadMs < 3 * c.heartbeatMs)
    return invalidArgument("MYRIAD_PEER_DEAD_MS (" + std::to_string(c.peerDeadMs) +
                           ") must be at least three heartbeats (MYRIAD_HEARTBEAT_MS " + std::to_string(c.heartbeatMs) +
                           "), or one late datagram declares a live rank dead");
  c.hostId = raw("MYRIAD_HOST_ID");
  MYR_TRY(readBool("MYRIAD_DISABLE_SHM", &c.disableShm));
  MYR_TRY(readEnum("MYRIAD_SHM_MODE", &c.shmMode));
  MYR_TRY(readSize("MYRIAD_SHM_SLOT_BYTES", &c.shmSlotBytes));
  MYR_TRY(readInt("MYRIAD_SHM_SLOTS", 2, 1024, &c.shmSlots));
  MYR_TRY(readSize("MYRIAD_DEVICE_SLOT_BYTES", &c.deviceSlotBytes));
  MYR_TRY(readInt("MYRIAD_DEVICE_SLOTS", 1, 1024, &c.deviceSlots));
  // Whole 16-byte vectors of every type in each slot: a reduction out of a slot needs whole elements.
  if (c.deviceSlotBytes < 256 || c.deviceSlotBytes > (size_t{1} << 30) || c.deviceSlotBytes % 256 != 0)
    return invalidArgument("MYRIAD_DEVICE_SLOT_BYTES must be a multiple of 256 between 256 and 1G");
  // A multiple of 64: every slot then holds whole elements of any type, which receives combined on
  // arrival rely on (transports/shm).
  if (c.shmSlotBytes < 4096 || c.shmSlotBytes > (size_t{1} << 30) || c.shmSlotBytes % 64 != 0)
    return invalidArgument("MYRIAD_SHM_SLOT_BYTES must be a multiple of 64 between 4K and 1G");
  c.socketIfname = raw("MYRIAD_SOCKET_IFNAME");
  MYR_TRY(readSize("MYRIAD_SOCKET_BUFFER_BYTES", &c.socketBufferBytes));
  MYR_TRY(readEnum("MYRIAD_NET", &c.net));
  c.ibHca = raw("MYRIAD_IB_HCA");
  MYR_TRY(readInt("MYRIAD_IB_GID_INDEX", -1, 65535, &c.ibGidIndex));
  MYR_TRY(readInt("MYRIAD_IB_ROCE_VERSION", 1, 2, &c.ibRoceVersion));
  MYR_TRY(readInt("MYRIAD_IB_TC", 0, 255, &c.ibTc));
  MYR_TRY(readInt("MYRIAD_IB_SL", 0, 15, &c.ibSl));
  MYR_TRY(readInt("MYRIAD_IB_TIMEOUT", 1, 31, &c.ibTimeout));
  MYR_TRY(readInt("MYRIAD_IB_RETRY_CNT", 0, 7, &c.ibRetryCnt));
  MYR_TRY(readInt("MYRIAD_IB_QPS_PER_PEER", 1, 64, &c.ibQpsPerPeer));
  MYR_TRY(readBool("MYRIAD_IB_REG_CACHE", &c.ibRegCache));
  c.algo = raw("MYRIAD_ALGO");
  c.tunerFile = raw("MYRIAD_TUNER_FILE");
  c.tunerPlugin = raw("MYRIAD_TUNER_PLUGIN");
  MYR_TRY(readSize("MYRIAD_CHUNK_BYTES", &c.chunkBytes));
  if (c.chunkBytes < 1024) return invalidArgument("MYRIAD_CHUNK_BYTES must be at least 1K");
  MYR_TRY(readEnum("MYRIAD_DEVICE", &c.device));
  c.commId = raw("MYRIAD_COMM_ID");
  c.commSecret = raw("MYRIAD_COMM_SECRET");
  c.topoFile = raw("MYRIAD_TOPO_FILE");
  c.netPathsAuto = raw("MYRIAD_NET_PATHS").empty() || raw("MYRIAD_NET_PATHS") == "auto";
  if (c.netPathsAuto)
    c.netPaths = kAutoNetPaths;
  else
    MYR_TRY(readInt("MYRIAD_NET_PATHS", 1, 64, &c.netPaths).isOk()
                ? Status::ok()
                : invalidArgument("MYRIAD_NET_PATHS='" + raw("MYRIAD_NET_PATHS") +
                                  "' is neither auto nor a path count from 1 to 64"));
  MYR_TRY(readBool("MYRIAD_NET_ADAPTIVE", &c.netAdaptive));
  MYR_TRY(readBool("MYRIAD_NET_COUPLED", &c.netCoupled));
  MYR_TRY(readSize("MYRIAD_NET_SPLIT_BYTES", &c.netSplitBytes));
  MYR_TRY(readSize("MYRIAD_NET_CHUNK_BYTES", &c.netChunkBytes));
  MYR_TRY(readSize("MYRIAD_NET_INFLIGHT_BYTES", &c.netInflightBytes));
  if (c.netChunkBytes < 4096) return invalidArgument("MYRIAD_NET_CHUNK_BYTES must be at least 4K");
  c.netPorts = raw("MYRIAD_NET_PORTS");
  MYR_TRY(readInt("MYRIAD_NET_LISTEN_PORT", 0, 65535, &c.netListenPort));
  long long seed = 0;
  MYR_TRY(parseInt("MYRIAD_NET_SEED", 0, (1LL << 62), &seed));
  c.netSeed = static_cast<uint64_t>(seed);
  MYR_TRY(readInt("MYRIAD_FLIGHT_RECORD", 0, 1 << 16, &c.flightRecord));
  c.dumpOnError = raw("MYRIAD_DUMP_ON_ERROR");
  return c;
}

}  // namespace myriad
