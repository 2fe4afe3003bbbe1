// PeerInfo encoding and the local machine's identity.
#include "rendezvous/peer_info.h"

#include <sched.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <fstream>

#include "base/wire.h"

namespace myriad {
namespace {
std::string bootId() {
  std::string boot;
  std::ifstream f("/proc/sys/kernel/random/boot_id");
  std::getline(f, boot);
  return boot;
}

uint64_t nsInode(const char* path) {
  struct stat st {};
  return stat(path, &st) == 0 ? static_cast<uint64_t>(st.st_ino) : 0;
}
}  // namespace

std::string localHostname() {
  char h[256] = "";
  gethostname(h, sizeof(h) - 1);
  return h;
}

uint64_t localPidNamespace() {
  return nsInode("/proc/self/ns/pid");
}

std::string localMachineId() {
  const std::string boot = bootId();
  return boot.empty() ? "host:" + localHostname() : boot;
}

int localCores() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof(set), &set) != 0) return std::max(1, static_cast<int>(sysconf(_SC_NPROCESSORS_ONLN)));
  return std::max(1, CPU_COUNT(&set));
}

std::string localHostId(const Config& config) {
  if (!config.hostId.empty()) return config.hostId;
  return bootId() + "/" + localHostname() + "/net:" + std::to_string(nsInode("/proc/self/ns/net"));
}

void PeerInfo::encode(Writer& w) const {
  w.i32(rank);
  w.i32(pid);
  w.str(hostId);
  w.str(hostname);
  w.str(machineId);
  w.i32(cores);
  w.u64(pidNamespace);
  w.u32(tcpAddr.len);
  w.raw(&tcpAddr.ss, sizeof(tcpAddr.ss));
  w.str(rdmaDevice);
  w.u32(livenessAddr.len);
  w.raw(&livenessAddr.ss, sizeof(livenessAddr.ss));
}

Result<PeerInfo> PeerInfo::decode(Reader& r) {
  PeerInfo p;
  p.rank = r.i32();
  p.pid = r.i32();
  p.hostId = r.str(512);
  p.hostname = r.str(256);
  p.machineId = r.str(512);
  p.cores = r.i32();
  p.pidNamespace = r.u64();
  p.tcpAddr.len = r.u32();
  r.raw(&p.tcpAddr.ss, sizeof(p.tcpAddr.ss));
  p.rdmaDevice = r.str(256);
  p.livenessAddr.len = r.u32();
  r.raw(&p.livenessAddr.ss, sizeof(p.livenessAddr.ss));
  if (r.failed() || p.cores < 0 || p.tcpAddr.len > sizeof(p.tcpAddr.ss) ||
      p.livenessAddr.len > sizeof(p.livenessAddr.ss))
    return invalidArgument("malformed peer description");
  return p;
}

std::string PeerInfo::describe() const {
  return "rank " + std::to_string(rank) + " (" + hostname + " pid " + std::to_string(pid) + ")";
}

}  // namespace myriad
