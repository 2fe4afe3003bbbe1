// MYRIAD_COMM_ID ids, the process-wide registry of roots started at init, and per-communicator namespaces.
// The registry is never freed: the servers it names live until the process exits.
#include "rendezvous/comm_id.h"

#include <map>
#include <mutex>

#include "base/auth.h"
#include "rendezvous/tcp_store.h"

namespace myriad {
namespace {

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
  // Forwarded whole: the tcp store's wait-all is one request, where the default would poll.
  Result<WaitAll> waitAll(const std::vector<std::string>& keys, const std::string& stopKey, int timeoutMs,
                          const std::atomic<bool>* abort) override {
    std::vector<std::string> named;
    for (const std::string& k : keys) named.push_back(name(k));
    return inner_->waitAll(named, stopKey.empty() ? stopKey : name(stopKey), timeoutMs, abort);
  }
  void setTimeoutMs(int ms) override { inner_->setTimeoutMs(ms); }
  std::string describe() const override { return inner_->describe() + " (" + prefix_ + "*)"; }

 private:
  std::string name(const std::string& key) const { return key == kStoreOwnerKey ? key : prefix_ + key; }

  std::shared_ptr<Store> inner_;
  std::string prefix_;
};

}  // namespace

Secret deriveSecret(const std::string& bytes) {
  Secret s{};
  const std::string ikm = "myriad.secret.v2 " + bytes;  // never empty (HKDF refuses an empty key)
  auth::hkdf(reinterpret_cast<const uint8_t*>(ikm.data()), ikm.size(), "myriad", "derive", s.data(), s.size());
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
  // A secret people choose may be guessable: PBKDF2 makes each guess against a recorded hello cost as much
  // as a rank's init does. Without one, the id is public knowledge and only a stable derivation matters.
  if (secret.empty()) {
    id.secret = deriveSecret("myriad.comm_id.v2 " + field(commId));
  } else {
    auth::pbkdf2(secret, "myriad.comm_id.v2 " + field(commId), auth::kPbkdf2Iterations, id.secret.data(),
                 id.secret.size());
  }
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
  id->secret = deriveSecret("myriad.comm_id.gen " + field(std::string(id->secret.begin(), id->secret.end())) +
                            field(std::to_string(generation)));
  return Status::ok();
}

}  // namespace myriad
