// Writes the fuzz targets' seeds: one well-formed input of each kind a target reads (made with the
// library's own encoders, so they follow the wire formats as they change), and a few near misses.
// myriad_fuzz_seeds DIR writes DIR/<target>/<name>; the committed seeds are its output.
#include <sys/stat.h>

#include <cstdio>
#include <string>
#include <vector>

#include "base/config.h"
#include "base/hello.h"
#include "base/wire.h"
#include "core/bootstrap_frames.h"
#include "core/liveness_wire.h"
#include "rendezvous/peer_info.h"
#include "rendezvous/store_request.h"
#include "rendezvous/unique_id.h"
#include "transports/cuda_ipc/ipc_hello.h"
#ifdef MYRIAD_HAVE_VERBS_SEEDS
#include "transports/rdma/rdma_end.h"
#endif

namespace {

using myriad::Bytes;

std::string root;

void put(const std::string& target, const std::string& name, const Bytes& b) {
  std::string dir = root + "/" + target;
  mkdir(dir.c_str(), 0755);
  std::FILE* f = std::fopen((dir + "/" + name).c_str(), "wb");
  if (!f || std::fwrite(b.data(), 1, b.size(), f) != b.size()) {
    std::perror((dir + "/" + name).c_str());
    std::exit(1);
  }
  std::fclose(f);
}

Bytes cat(std::initializer_list<Bytes> parts) {
  Bytes out;
  for (const Bytes& p : parts) out.insert(out.end(), p.begin(), p.end());
  return out;
}

Bytes text(const std::string& s) {
  return Bytes(s.begin(), s.end());
}

Bytes request(uint8_t op, const std::string& key, const Bytes* value) {
  myriad::Writer w;
  w.u8(op);
  w.str(key);
  if (value) {
    w.u64(value->size());
    w.raw(value->data(), value->size());
  }
  return w.bytes();
}

void storeSeeds() {
  Bytes v = text("peer description");
  Bytes set = request(myriad::storeproto::kSet, "peer.0", &v);
  Bytes get = request(myriad::storeproto::kGetWait, "peer.0", nullptr);
  Bytes tryGet = request(myriad::storeproto::kTryGet, "abort", nullptr);
  put("store_request", "set", set);
  put("store_request", "set-get-tryget", cat({set, get, tryGet}));
  put("store_request", "bad-op", cat({set, Bytes{9, 1, 0, 0, 0, 'k'}}));
  myriad::Writer all;  // a wait-all of two addresses, stopped by the abort notice
  all.u8(myriad::storeproto::kWaitAll);
  all.str("boot.abort");
  all.u32(2);
  all.str("boot.1");
  all.str("boot.2");
  put("store_request", "wait-all", cat({set, all.bytes(), tryGet}));
}

void uniqueIdSeeds() {
  myriad::UniqueId id;
  id.secret = myriad::randomSecret();
  id.tcpRoot = myriad::SockAddr::parse("127.0.0.1:29500").take();
  auto raw = [](const myriad::UniqueId& u) {
    myrUniqueId e = u.encode();
    auto p = reinterpret_cast<const uint8_t*>(&e);
    return Bytes(p, p + sizeof(e));
  };
  put("unique_id", "tcp", raw(id));
  id.rootAtInit = true;
  id.tcpRoot = myriad::SockAddr::parse("[::1]:29500").take();
  put("unique_id", "tcp6-root-at-init", raw(id));
  myriad::UniqueId file;
  file.kind = myriad::IdKind::kFile;
  file.fileDir = "/tmp/myriad-rendezvous";
  put("unique_id", "file", raw(file));
}

void envSeeds() {
  const auto table = myriad::envTable();
  Bytes all;
  for (size_t i = 0; i < table.size(); ++i) {
    Bytes line{static_cast<uint8_t>(i)};
    Bytes value = text(table[i].defaultValue);
    line.insert(line.end(), value.begin(), value.end());
    put("env", std::string("default-") + table[i].name, line);
    if (i % 5 == 0) {
      all.insert(all.end(), line.begin(), line.end());
      all.push_back('\n');
    }
  }
  put("env", "several", all);
}

void livenessSeeds() {
  namespace lv = myriad::liveness;
  lv::Datagram d;
  d.commKey = 0x6d7972696164ULL;  // the target's communicator
  d.from = 3;
  d.state.seq = 41;
  d.state.inCall = true;
  d.state.op = "all_reduce";
  d.state.count = 1 << 20;
  d.state.dtype = "float32";
  d.state.sinceMs = 120;
  d.state.waitsOn = 4;
  d.state.quietMs = 80;
  Bytes nranks{1};  // 38 ranks
  put("liveness", "heartbeat", cat({nranks, lv::encode(d)}));
  d.kind = lv::Kind::kProbe;
  d.about = 5;
  d.fates.push_back({5, lv::FateKind::kDead, "rank 5 (node-b pid 77) stopped answering heartbeats 2.0 s ago"});
  d.fates.push_back({6, lv::FateKind::kLeft, "rank 6 left the communicator"});
  put("liveness", "probe-with-fates", cat({nranks, lv::encode(d)}));
}

void peerInfoSeeds() {
  myriad::PeerInfo p;
  p.rank = 2;
  p.pid = 4121;
  p.hostId = "0123456789abcdef-node-b-4026531840";
  p.hostname = "node-b";
  p.machineId = "6f1c0a52-93a4-4c1e-8d7e-2b1f0c9e4a11";
  p.cores = 64;
  p.pidNamespace = 4026531836;
  p.tcpAddr = myriad::SockAddr::parse("10.1.2.3:41000").take();
  p.livenessAddr = myriad::SockAddr::parse("10.1.2.3:41001").take();
  p.rdmaDevice = "mlx5_0:1";
  myriad::Writer w;
  p.encode(w);
  put("peer_info", "rank2", w.bytes());
}

void bootFrameSeeds() {
  namespace bf = myriad::bootframe;
  // Round 1 of 4 ranks: 2 descriptions (nranks and an address, as Comm::bootstrap sends them).
  auto description = [](const std::string& addr) {
    myriad::Writer w;
    w.i32(4);
    w.str(addr);
    return w.bytes();
  };
  const Bytes a = description("10.1.2.3:41000"), b = description("10.1.2.4:41000");
  const Bytes round = bf::encodeRound({&a, &b});
  put("boot_frame", "round-of-2", cat({Bytes{1}, Bytes(round.begin() + 4, round.end())}));
  put("boot_frame", "round-of-2-trailing", cat({Bytes{1}, Bytes(round.begin() + 4, round.end()), Bytes{0}}));
  const Bytes failure = bf::encodeFailure(myriad::Status(myriad::Code::kInvalidUsage, "rank 3: nranks=5, not 4"));
  put("boot_frame", "failure", cat({Bytes{0}, failure}));
}

void ipcHelloSeeds() {
  myriad::ipc::Hello h;
  h.rank = 1;
  h.pid = 5000;
  h.layout.slots = 4;
  h.layout.slotBytes = 4 << 20;
  h.bytes = h.layout.bytes();
  h.mapBytes = (h.bytes + (2 << 20) - 1) / (2 << 20) * (2 << 20);
  h.base = 0x7f0000000000;
  h.blob = Bytes(64, 0xab);
  put("ipc_hello", "rank1", cat({Bytes{1}, myriad::ipc::encodeHello(h)}));
}

void helloSeeds() {
  Bytes ident{'T', 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0};
  put("hello", "relay-clean", cat({Bytes{2}, ident, Bytes{0}, text("first request")}));
  put("hello", "relay-flip-open", cat({Bytes{2}, ident, Bytes{1, 0x84, 0x01}}));
  put("hello", "relay-flip-answer", cat({Bytes{2}, ident, Bytes{1, 40, 0x80}}));
  put("hello", "relay-flip-proof", cat({Bytes{2}, ident, Bytes{1, 0x80 | 40, 0x80}, text("first request")}));
  myriad::Writer open;
  open.u32(myriad::kHelloMagic);
  open.u32(myriad::kHelloVersion);
  open.raw(Bytes(16, 7).data(), 16);
  open.raw(ident.data(), ident.size());
  put("hello", "stranger-open", cat({Bytes{0}, open.bytes(), Bytes(32, 9)}));
  myriad::Writer legacy;
  legacy.u32(0x5352594d);
  put("hello", "stranger-legacy", cat({Bytes{0}, legacy.bytes(), Bytes(16, 1)}));
  myriad::Writer answer;
  answer.u32(myriad::kHelloMagic);
  answer.u32(myriad::kHelloVersion);
  answer.raw(Bytes(48, 3).data(), 48);
  put("hello", "stranger-answer", cat({Bytes{1}, answer.bytes()}));
}

void topologySeeds() {
  put("topology", "hwloc-small",
      text("<?xml version=\"1.0\"?>\n<topology version=\"2.0\">\n<object type=\"Machine\" os_index=\"0\">\n"
           "<object type=\"Package\" os_index=\"0\"><object type=\"NUMANode\" os_index=\"0\"/>\n"
           "<object type=\"Bridge\" bridge_type=\"0-1\" depth=\"0\" bridge_pci=\"0000:[00-02]\">\n"
           "<object type=\"PCIDev\" pci_busid=\"0000:01:00.0\" pci_type=\"0302 [10de:2330] [10de:16c1] a1\" "
           "pci_link_speed=\"31.5\"/>\n</object></object></object>\n</topology>\n"));
}

#ifdef MYRIAD_HAVE_VERBS_SEEDS
void rdmaSeeds() {
  myriad::RdmaConnection::End e;
  e.device = "rxe0";
  e.port = 1;
  e.gidIndex = 1;
  e.gid[10] = 0xff;
  e.gid[11] = 0xff;
  e.lid = 0;
  e.mtu = 4096;
  e.maxMsg = 1 << 30;
  e.qps = {{0x11, 0x1234, 49152}, {0x12, 0x5678, 49153}};
  put("rdma_end", "two-qps", myriad::encodeRdmaEnd(e));
}
#endif

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: myriad_fuzz_seeds DIR\n");
    return 2;
  }
  root = argv[1];
  mkdir(root.c_str(), 0755);
  storeSeeds();
  uniqueIdSeeds();
  envSeeds();
  livenessSeeds();
  peerInfoSeeds();
  ipcHelloSeeds();
  bootFrameSeeds();
  helloSeeds();
  topologySeeds();
#ifdef MYRIAD_HAVE_VERBS_SEEDS
  rdmaSeeds();
#endif
  return 0;
}
