// MYRIAD_COMM_ID ids, the process-wide registry of roots started at init, and per-communicator namespaces.
// The registry is never freed: the servers it names live until the process exits.
#include "rendezvous/comm_id.h"

#include <map>
#include <mutex>

#include "rendezvous/tcp_store.h"

namespace myriad {
namespace {

uint64_t splitmix64(uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

// Every byte goes through the full splitmix finaliser, so each one changes every output bit.
uint64_t hashPass(uint64_t seed, const std::string& bytes) {
  uint64_t h = splitmix64(seed);
  for (unsigned char b : bytes) h = splitmix64(h ^ b);
  return splitmix64(h ^ bytes.size());
}

// Length-prefixed, so that ("ab", "c") and ("a", "bc") hash differently.
std::string field(const std::string& s) {
  return std::to_string(s.size()) + ":" + s;
}

struct Registry {
  std::mutex mu;
  std::map<std::string, Secret> roots;     // address -> secret of a root this process started
  std::map<std::string, int> generations;  // address + tag -> communicators made from that id so far
};

Registry& registry() {
  static auto* r = new Registry;
  return *r;
}

Status ensureRoot(const UniqueId& id) {
  const std::string where = id.tcpRoot.toString();
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mu);
  auto it = r.roots.find(where);
  if (it != r.roots.end()) {
    if (secretEquals(it->second, id.secret)) return Status::ok();
    return invalidUsage("this process already hosts a MYRIAD_COMM_ID root on " + where +
                        " with another secret (did MYRIAD_COMM_SECRET change between communicators?)");
  }
  SockAddr addr = id.tcpRoot;
  Status s = startTcpStoreServer(&addr, id.secret);
  if (!s.isOk())
    return Status(s.code(), "rank 0 cannot host the MYRIAD_COMM_ID rendezvous root on " + where +
                                " (is the port taken, or the address not one of this host's?): " + s.message());
  r.roots[where] = id.secret;
  return Status::ok();
}

int nextGeneration(const UniqueId& id) {
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mu);
  return r.generations[id.tcpRoot.toString() + " " + id.tag()]++;
}

// One communicator's keys on a root shared by several: "gen<k>.<key>". The root's own key (who hosts it)
// is shared by all of them.
class NamespacedStore final : public Store {
 public:
  NamespacedStore(std::shared_ptr<Store> inner, std::string prefix)
      : inner_(std::move(inner)), prefix_(std::move(prefix)) {}
  Status set(const std::string& key, const Bytes& value) override { return inner_->set(name(key), value); }
  Result<Bytes> get(const std::string& key, int timeoutMs, const std::atomic<bool>* abort) override {
    return inner_->get(name(key), timeoutMs, abort);
  }
  Result<Bytes> tryGet(const std::string& key) override { return inner_->tryGet(name(key)); }
  void setTimeoutMs(int ms) override { inner_->setTimeoutMs(ms); }
  std::string describe() const override { return inner_->describe() + " (" + prefix_ + "*)"; }

 private:
  std::string name(const std::string& key) const { return key == kStoreOwnerKey ? key : prefix_ + key; }

  std::shared_ptr<Store> inner_;
  std::string prefix_;
};

}  // namespace

Secret hashSecret(const std::string& bytes) {
  const uint64_t lanes[2] = {hashPass(0x6d79726961642d31ULL, bytes), hashPass(0x3e5c1f0a9b7d2463ULL, bytes)};
  Secret s{};
  for (size_t i = 0; i < s.size(); ++i) s[i] = static_cast<uint8_t>(lanes[i / 8] >> (8 * (i % 8)));
  return s;
}

Result<UniqueId> uniqueIdFromCommId(const std::string& commId, const std::string& secret) {
  auto addr = SockAddr::parse(commId);
  if (!addr.isOk())
    return invalidArgument("MYRIAD_COMM_ID: " + addr.status().message() + " (expected host:port or [ipv6]:port)");
  if (addr.value().port() == 0)
    return invalidArgument("MYRIAD_COMM_ID='" + commId +
                           "' has port 0; rank 0 listens there, so it needs a fixed port");
  UniqueId id;
  id.kind = IdKind::kTcp;
  id.rootAtInit = true;
  id.tcpRoot = addr.value();
  id.secret = hashSecret("myriad.comm_id.v1 " + field(commId) + field(secret));
  return id;
}

Status prepareRootAtInit(int rank, UniqueId* id, std::shared_ptr<Store>* store) {
  if (rank == 0) MYR_TRY(ensureRoot(*id));
  const int generation = nextGeneration(*id);
  if (generation == 0) return Status::ok();
  // A later communicator on the same root: its own keys, and its own secret and tag for the transports
  // (shared-memory segment names), the same on every rank because every rank counts the same way.
  const std::string prefix = "gen" + std::to_string(generation) + ".";
  *store = std::make_shared<NamespacedStore>(std::move(*store), prefix);
  id->secret = hashSecret("myriad.comm_id.gen " + field(std::string(id->secret.begin(), id->secret.end())) +
                          field(std::to_string(generation)));
  return Status::ok();
}

}  // namespace myriad
