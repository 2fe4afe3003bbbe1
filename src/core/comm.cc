// Comm: bootstrap (rendezvous and exchange of peer descriptions), connections, scratch memory.
#include "core/comm.h"

#include <sys/mman.h>
#include <unistd.h>

#include <cstring>
#include <thread>

#include "base/auth.h"
#include "base/log.h"
#include "base/wire.h"
#include "core/bootstrap_allgather.h"
#include "core/flight_dump.h"
#include "rendezvous/tcp_store.h"
#include "topology/detect.h"

namespace myriad {

Result<std::unique_ptr<Comm>> Comm::create(CommSetup setup) {
  if (setup.nranks <= 0) return invalidArgument("nranks must be positive, got " + std::to_string(setup.nranks));
  if (setup.rank < 0 || setup.rank >= setup.nranks)
    return invalidArgument("rank " + std::to_string(setup.rank) + " is out of range [0, " +
                           std::to_string(setup.nranks) + ")");
  if (!setup.store) return invalidArgument("no rendezvous store");
  if (!setup.openTransports) return invalidArgument("no transport factory");
  std::unique_ptr<Comm> c(new Comm());
  c->rank_ = setup.rank;
  c->nranks_ = setup.nranks;
  c->config_ = setup.config;
  c->store_ = setup.store;
  c->commTag_ = setup.commTag;
  c->secret_ = setup.secret;
  c->deviceChannels_ = setup.deviceChannels;
  configureLogging(c->config_);
  c->flight_ = std::make_unique<FlightRecorder>(c->config_.flightRecord, setup.nranks);
  MYR_TRY(c->bootstrap(setup).addContext("rank " + std::to_string(setup.rank) + " of " + std::to_string(setup.nranks) +
                                         ": init"));
  if (!c->config_.dumpOnError.empty()) c->errors_.onFirstError([comm = c.get()] { dumpOnError(*comm); });
  return c;
}

Status Comm::bootstrap(CommSetup& setup) {
  PeerInfo self;
  self.rank = rank_;
  self.pid = static_cast<int32_t>(getpid());
  self.hostId = localHostId(config_);
  self.hostname = localHostname();
  self.machineId = localMachineId();
  self.cores = localCores();
  self.pidNamespace = localPidNamespace();
  TransportContext ctx;
  ctx.rank = rank_;
  ctx.nranks = nranks_;
  ctx.commTag = commTag_;
  ctx.secret = setup.secret;
  ctx.config = &config_;
  ctx.abort = errors_.flag();
  ctx.store = store_.get();
  MYR_ASSIGN_OR_RETURN(topology_, localTopology(config_.topoFile));
  ctx.topology = &topology_;
  MYR_ASSIGN_OR_RETURN(transports_, setup.openTransports(ctx, &self));
  if (config_.heartbeatMs > 0) {
    MYR_ASSIGN_OR_RETURN(SockAddr host, chooseListenAddress(config_.socketIfname));
    MYR_ASSIGN_OR_RETURN(liveness_, Liveness::bind(host));
    self.livenessAddr = liveness_->address();
  }
  for (auto& t : transports_)
    if (WakeHook* h = t->wakeHook()) wakeHooks_.push_back(h);

  // The ranks' descriptions move among the ranks (core/bootstrap_allgather.h, Bruck's all-gather); the
  // store carries only each rank's address.
  Writer mine;
  mine.i32(nranks_);
  self.encode(mine);
  BootstrapExchange boot;
  boot.store = store_.get();
  boot.rank = rank_;
  boot.nranks = nranks_;
  boot.key = auth::deriveKey(setup.secret.data(), setup.secret.size(), "myriad bootstrap hello v1 " + commTag_);
  boot.ifname = config_.socketIfname;
  boot.timeoutMs = config_.initTimeoutMs;
  boot.cancel = setup.cancel;
  MYR_ASSIGN_OR_RETURN(std::vector<Bytes> all, bootstrapAllGather(boot, mine.bytes()));
  for (int r = 0; r < nranks_; ++r) {
    Reader rd(all[static_cast<size_t>(r)]);
    const int32_t theirN = rd.i32();
    if (rd.failed()) return invalidArgument("malformed description of rank " + std::to_string(r));
    if (theirN != nranks_)
      return invalidUsage("rank " + std::to_string(r) + " was started with nranks=" + std::to_string(theirN) +
                          " but rank " + std::to_string(rank_) + " with nranks=" + std::to_string(nranks_));
    MYR_ASSIGN_OR_RETURN(PeerInfo p, PeerInfo::decode(rd));
    if (p.rank != r)
      return internalError("peer description of rank " + std::to_string(r) + " names rank " + std::to_string(p.rank));
    peers_.push_back(std::move(p));
  }
  conns_.resize(static_cast<size_t>(nranks_));
  sendTags_.assign(static_cast<size_t>(nranks_), 0);
  recvTags_.assign(static_cast<size_t>(nranks_), 0);
  std::vector<std::string> hostIds, machineIds;
  std::vector<int> cores;
  for (const auto& p : peers_) {
    hostIds.push_back(p.hostId);
    machineIds.push_back(p.machineId);
    cores.push_back(p.cores);
  }
  view_.rank = rank_;
  view_.layout = HostLayout::onMachines(*HostLayout::fromLabels(hostIds), machineIds, cores);
  view_.topology = &topology_;
  view_.chunkBytes = config_.chunkBytes;
  view_.hostShm = !config_.disableShm;
  view_.netRdma = config_.net == "rdma";
  // Ranks of emulated hosts on this machine (MYRIAD_HOST_ID, network namespaces) compete for its CPUs too.
  int local = 0;
  for (const auto& p : peers_) local += p.machineId == self.machineId ? 1 : 0;
  oversubscribed_ = local > self.cores;
  findStoreOwner();
  startLiveness();
  // After init, store operations (abort notices) must fail fast rather than wait for a dead root.
  store_->setTimeoutMs(std::min(config_.timeoutMs, 2000));
  MYR_LOG(kInfo, kInit, rank_, "communicator ready: " + std::to_string(nranks_) + " ranks, host " + self.hostname);
  return Status::ok();
}

void Comm::findStoreOwner() {
  auto owner = store_->tryGet(kStoreOwnerKey);
  if (!owner.isOk()) return;
  std::string text(owner.value().begin(), owner.value().end());
  for (const auto& p : peers_)
    if (text == p.hostname + " " + std::to_string(p.pid)) storeOwner_ = p.describe();
  if (storeOwner_.empty()) storeOwner_ = "process " + text + " (not a rank)";
}

Comm::~Comm() {
  waitIdle();
  drainDevice();
  stopWatchingDevice();
  if (errors_.aborted() && device_) device_->releaseWaits();
  device_.reset();  // waits for what is enqueued on the device
  if (!errors_.aborted()) {
    drainConnections();
  }
  conns_.clear();
  for (uint64_t id : registered_) unpinEverywhere(id);
  registered_.clear();
  if (scratchPin_) unpinEverywhere(scratchPin_);
  if (scratch_) munmap(scratch_, scratchBytes_);
  // Last: a peer that dies while this one drains is still noticed; then the peers hear that this one left.
  if (liveness_) liveness_->leave();
}

Result<Connection*> Comm::connection(int peer) {
  auto& slot = conns_[static_cast<size_t>(peer)];
  if (slot) return slot.get();
  const PeerInfo& self = peers_[static_cast<size_t>(rank_)];
  const PeerInfo& other = peers_[static_cast<size_t>(peer)];
  Transport* t = nullptr;
  for (auto& candidate : transports_)
    if (candidate->canReach(self, other)) {
      t = candidate.get();
      break;
    }
  if (!t)
    return fail(
        Status(Code::kInvalidUsage, "rank " + std::to_string(rank_) + ": no transport reaches " + other.describe()));
  auto c = t->connect(other);
  if (!c.isOk())
    return fail(c.takeStatus().addContext("rank " + std::to_string(rank_) + ": connect to " + other.describe()));
  slot = c.take();
  open_.push_back(slot.get());
  return slot.get();
}

void* Comm::scratch(size_t bytes) {
  if (bytes <= scratchBytes_) return scratch_;
  if (scratchPin_) unpinEverywhere(scratchPin_);
  scratchPin_ = 0;
  if (scratch_) munmap(scratch_, scratchBytes_);
  size_t size = (bytes + 4095) / 4096 * 4096;
  // MAP_POPULATE: pages are faulted here, once, not on the data path.
  void* p = mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
  if (p == MAP_FAILED) {
    scratch_ = nullptr;
    scratchBytes_ = 0;
    return nullptr;
  }
  scratch_ = p;
  scratchBytes_ = size;
  // Best effort: an unpinned scratch still works, registered per message.
  auto pin = pinEverywhere(p, size);
  if (pin.isOk())
    scratchPin_ = pin.value();
  else
    MYR_LOG(kInfo, kNet, rank_, "scratch memory stays unpinned: " + pin.status().message());
  return p;
}

std::string Comm::netTelemetry() const {
  std::string out;
  for (const auto& t : transports_) out += t->telemetry();
  return out;
}

std::string Comm::describePeers() const {
  std::string out;
  for (int r = 0; r < nranks_; ++r) {
    if (r == rank_) continue;
    const Connection* c = conns_[static_cast<size_t>(r)].get();
    out += "peer " + std::to_string(r) + ": " + (c ? c->describe() : std::string("not connected")) + "\n";
  }
  const FlightSnapshot f = flight_->snapshot();
  if (f.records.empty()) {
    out += "last call: none recorded (MYRIAD_FLIGHT_RECORD=0, or no call yet)\n";
  } else {
    const CallRecord& last = f.records.back();
    out += std::string("last call: ") + last.op + " via " + last.algorithm + "\n";
  }
  return out;
}

Result<uint64_t> Comm::pinEverywhere(void* p, size_t n) {
  const uint64_t id = nextPin_++;
  for (size_t i = 0; i < transports_.size(); ++i) {
    Status s = transports_[i]->pin(id, p, n);
    if (s.isOk()) continue;
    for (size_t j = 0; j < i; ++j) transports_[j]->unpin(id);
    return s;
  }
  return id;
}

void Comm::unpinEverywhere(uint64_t id) {
  for (auto& t : transports_) t->unpin(id);
}

Result<uint64_t> Comm::registerBuffer(void* p, size_t n) {
  std::lock_guard<std::mutex> lock(execMutex_);
  MYR_TRY(usable());
  MYR_ASSIGN_OR_RETURN(uint64_t id, pinEverywhere(p, n));
  registered_.insert(id);
  MYR_LOG(kTrace, kNet, rank_, "registered " + std::to_string(n) + " bytes as handle " + std::to_string(id));
  return id;
}

Status Comm::deregisterBuffer(uint64_t handle) {
  waitIdle();  // calls queued on streams may still use the buffer
  std::lock_guard<std::mutex> lock(execMutex_);
  if (registered_.erase(handle) == 0)
    return invalidArgument("handle " + std::to_string(handle) +
                           " is not a registration of this communicator (deregistered twice, or from another one?)");
  unpinEverywhere(handle);
  return Status::ok();
}

void Comm::drainConnections() {
  auto deadline = Clock::now() + std::chrono::milliseconds(config_.timeoutMs);
  std::vector<Connection*> left = open_;
  for (;;) {
    std::erase_if(left, [](Connection* c) { return c->drainStep(); });
    if (left.empty()) return;
    if (Clock::now() >= deadline) break;
    std::this_thread::sleep_for(std::chrono::microseconds(20));
  }
  for (Connection* c : left)
    MYR_LOG(kWarn, kInit, rank_,
            "destroyed with data for " + c->peer().describe() + " not yet delivered after " +
                std::to_string(config_.timeoutMs) + " ms (MYRIAD_TIMEOUT_MS)");
}

void Comm::drainDevice() {
  if (!device_) return;
  // The watch goes on meanwhile: a peer that dies now still fails the communicator and releases the waits.
  // A peer that is alive but never makes its part of the calls is given the silence deadline.
  auto deadline = Clock::now() + std::chrono::milliseconds(config_.timeoutMs);
  while (device_->busy() && !errors_.aborted()) {
    if (Clock::now() >= deadline) {
      fail(Status(Code::kTimeout, "rank " + std::to_string(rank_) + ": destroyed with device work unfinished after " +
                                      std::to_string(config_.timeoutMs) +
                                      " ms (a peer never made its part of the calls?); its waits are released"))
          .ignore();
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
}

void Comm::abort() {
  errors_.abort();
  std::lock_guard<std::mutex> lock(deviceMu_);
  if (device_) device_->releaseWaits();
}

Result<DeviceComm*> Comm::deviceComm(Device& device) {
  std::lock_guard<std::mutex> lock(deviceMu_);
  if (device_) {
    if (&device_->device() != &device) return internalError("the communicator's device changed");
    return device_.get();
  }
  if (!deviceChannels_)
    return invalidUsage("rank " + std::to_string(rank_) + ": this communicator cannot reach peers from device memory");
  device_ = std::make_unique<DeviceComm>(device, rank_, nranks_, deviceChannels_(*this));
  deviceWatch_ = std::thread([this] { watchDevice(); });
  return device_.get();
}

void Comm::addPending(int delta) {
  std::lock_guard<std::mutex> lock(pendingMu_);
  pending_ += delta;
  if (pending_ == 0) pendingCv_.notify_all();
}

void Comm::waitIdle() {
  std::unique_lock<std::mutex> lock(pendingMu_);
  pendingCv_.wait(lock, [this] { return pending_ == 0; });
}

Status Comm::fail(Status s) {
  bool first = !errors_.aborted();
  Status recorded = errors_.fail(s);
  if (first && s.code() != Code::kInvalidArgument) {
    MYR_LOG(kWarn, kColl, rank_, s.message());
    // Tell every rank, so that those not directly connected to the failure stop too: over the liveness
    // channel when there is one (it needs no store), else through the store (best effort).
    std::string me = "rank " + std::to_string(rank_) + ": ";
    std::string text = s.message().rfind(me, 0) == 0 ? s.message().substr(me.size()) : s.message();
    text = "rank " + std::to_string(rank_) + " (" + localHostname() + ") reports: " + text;
    if (liveness_) {
      liveness_->announce(liveness::Fate{rank_, liveness::FateKind::kFailed, text});
    } else {
      Writer w;
      w.str(text);
      store_->set("abort", w.bytes()).ignore();
    }
  }
  return recorded;
}

}  // namespace myriad
