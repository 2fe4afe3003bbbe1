// Comm: one rank's communicator. It owns a handful of parts — Config, the peers' descriptions, the
// transports (handed over in preference order by a factory outside this layer) and lazily opened
// connections, the error state, scratch memory — and offers planners a read-only CommView. Executors
// (src/exec) run schedules on its connections and ask it for liveness checks. Calls on one Comm execute one
// at a time, in the order they were issued.
#pragma once

#include <array>
#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "base/config.h"
#include "base/cpu_waiters.h"
#include "core/device_comm.h"
#include "core/error_state.h"
#include "core/flight_record.h"
#include "core/liveness.h"
#include "core/transport.h"
#include "plan/comm_view.h"
#include "rendezvous/peer_info.h"
#include "rendezvous/store.h"
#include "rendezvous/unique_id.h"
#include "topology/topology.h"

namespace myriad {

struct CommSetup {
  int rank = 0;
  int nranks = 0;
  std::shared_ptr<Store> store;
  Secret secret{};
  std::string commTag;  // unique per communicator; names shared-memory segments
  Config config;
  const std::atomic<bool>* cancel = nullptr;  // aborts a rendezvous in progress
  TransportFactory openTransports;            // this rank's transports, in order of preference
  // The channels to peers for calls on device memory (transports/cuda_ipc); unset: none.
  std::function<DeviceChannelOpener(class Comm&)> deviceChannels;
};

class Comm {
 public:
  // Rendezvous through the store, exchange of peer descriptions, transports ready. Collective.
  static Result<std::unique_ptr<Comm>> create(CommSetup setup);
  ~Comm();

  int rank() const { return rank_; }
  int nranks() const { return nranks_; }
  const Config& config() const { return config_; }
  const PeerInfo& peer(int r) const { return peers_[static_cast<size_t>(r)]; }
  ErrorState& errors() { return errors_; }
  // The last calls and the current one (MYRIAD_FLIGHT_RECORD; core/flight_record.h). Thread-safe.
  FlightRecorder& flight() const { return *flight_; }
  // What a communicator split from this one inherits: the rendezvous store, the secret and the tag.
  const std::shared_ptr<Store>& store() const { return store_; }
  const Secret& secret() const { return secret_; }
  const std::string& commTag() const { return commTag_; }
  // Counts splits; every rank calls myrCommSplit in the same order, so the numbers agree.
  int nextSplit() { return splits_++; }

  // The connection to `peer`, opened on first use by the first transport that reaches it.
  Result<Connection*> connection(int peer);
  // Pre-faulted scratch memory owned by the communicator; grows, never shrinks. Valid until the next
  // call with a larger size. Pinned in every transport (see Transport::pin) while it lives.
  void* scratch(size_t bytes);
  // Buffers the user registered for repeated use (myrCommRegister): every transport is told (pin), so the
  // rdma transport registers the memory once instead of per message. Handles count from 1 and are never
  // reused. Both take the execution lock; deregistering first waits for the calls queued on streams, so
  // the buffer may be freed as soon as it returns.
  Result<uint64_t> registerBuffer(void* p, size_t n);
  Status deregisterBuffer(uint64_t handle);
  // Message tags count messages per peer and direction across calls, so that both ends of a pair agree
  // whatever else each talks to (point-to-point calls included); a mismatch names the peer.
  uint32_t nextSendTag(int peer) { return sendTags_[static_cast<size_t>(peer)]++; }
  uint32_t nextRecvTag(int peer) { return recvTags_[static_cast<size_t>(peer)]++; }
  // This rank's machine: detected once per process, or MYRIAD_TOPO_FILE completed by detection.
  const Topology& topology() const { return topology_; }
  // What planners may read: rank, host layout (ranks grouped by host, in rank order within each host,
  // hosts ordered by their lowest rank), topology, chunk size.
  const CommView& view() const { return view_; }
  // The multipath telemetry of every network transport, as myrDebugNetPaths prints it.
  std::string netTelemetry() const;
  // myrDebugPeers: each peer's connection as it describes itself, and the last recorded call's algorithm.
  std::string describePeers() const;

  // For executors. The connections opened so far (for liveness checks and background polling); the wake-up
  // hooks of the transports that have one (read before polling, sleep on after); whether this host has more
  // ranks than cores (sleep at once instead of spinning); who else wants a CPU.
  const std::vector<Connection*>& openConnections() const { return open_; }
  const std::vector<WakeHook*>& wakeHooks() const { return wakeHooks_; }
  bool oversubscribed() const { return oversubscribed_; }
  CpuWaiters& cpuWaiters() { return cpuWaiters_; }
  // While a wait makes no progress: the abort flag, the liveness of the peers waited on, the silence
  // deadline (MYRIAD_TIMEOUT_MS), and (when checkStore) the store's abort notice.
  Status checkWhileStalled(bool checkStore);
  // Bytes move again: this rank no longer waits on anyone.
  void clearStall();
  // A failure seen by an executor: recorded, or replaced by a root cause another rank already published.
  Status failDetected(Status detected);

  // Ok, or the error that stopped this communicator (its first error, or "aborted").
  Status usable() const;
  // Stops every call: waits on the host fail at once, waits on the device are released.
  void abort();

  // The resources of calls on device memory, created at the first one (on `device`, the process's device).
  Result<DeviceComm*> deviceComm(Device& device);

  // Serialises calls: the executing thread holds this while a task runs.
  std::mutex& execMutex() { return execMutex_; }
  // Outstanding asynchronous calls (enqueued on streams); destroy waits for them.
  void addPending(int delta);
  void waitIdle();

  // Records a failure detected by this rank and tells the other ranks through the store.
  Status fail(Status s);

  // The liveness channel (core/liveness.h); null when MYRIAD_HEARTBEAT_MS is 0.
  Liveness* liveness() { return liveness_.get(); }
  // What this rank tells the others of itself: its call and whom it waits on.
  liveness::SelfState selfState() const;

 private:
  Comm() = default;
  Status bootstrap(CommSetup& setup);
  void findStoreOwner();
  Status learnedFailure(const Bytes& notice);
  // Stall records and blame for silence (core/blame.cc).
  void publishStall(int peer);
  Status blameSilence(int peer, long long silentMs);
  // With the liveness channel: dead, left, late or stuck (core/stall.cc).
  Status judgeStall(int peer, long long silentMs);
  void reportStall(long long silentMs);
  // A rank died or left (from the liveness thread).
  void heardFate(const liveness::Fate& f);
  void startLiveness();

  int rank_ = 0;
  int nranks_ = 0;
  Config config_;
  std::shared_ptr<Store> store_;
  std::string commTag_;
  Secret secret_{};
  int splits_ = 0;
  std::vector<PeerInfo> peers_;
  std::vector<std::unique_ptr<Transport>> transports_;  // in order of preference
  std::vector<WakeHook*> wakeHooks_;
  std::vector<std::unique_ptr<Connection>> conns_;  // by rank, opened lazily
  std::function<DeviceChannelOpener(Comm&)> deviceChannels_;
  std::unique_ptr<DeviceComm> device_;  // created at the first call on device memory
  // While device_ exists: watches the peers device work may wait on (core/device_watch.cc).
  std::thread deviceWatch_;
  std::condition_variable deviceWatchCv_;
  bool stopDeviceWatch_ = false;
  void watchDevice();
  void stopWatchingDevice();
  // At destruction: waits for device work to finish, a failure, or the silence deadline.
  void drainDevice();
  // At destruction: turns every open connection's drainStep until all are done or the timeout passes.
  void drainConnections();
  std::mutex deviceMu_;            // device_ against abort() from another thread
  std::vector<Connection*> open_;  // the opened ones, for liveness checks
  std::string storeOwner_;         // who hosts the tcp store, for messages
  bool oversubscribed_ = false;    // more ranks on this host than cores: sleep at once instead of spinning
  CpuWaiters cpuWaiters_;          // otherwise: spin on while nobody waits for a CPU
  ErrorState errors_;
  std::unique_ptr<FlightRecorder> flight_;
  std::mutex execMutex_;
  std::mutex pendingMu_;
  std::condition_variable pendingCv_;
  int pending_ = 0;
  std::vector<uint32_t> sendTags_, recvTags_;
  CommView view_;
  Topology topology_;
  std::unique_ptr<Liveness> liveness_;
  std::atomic<int> waitsOn_{-1};          // the peer this rank's call is stalled on; -1: none
  std::atomic<int64_t> quietSinceNs_{0};  // since when no data moved with it (Clock's epoch)
  Clock::time_point lastStallReport_{};
  bool stallPublished_ = false;  // this rank's stall record says it waits on someone
  uint32_t stallBeat_ = 0;
  Clock::time_point lastStallWrite_{};
  void* scratch_ = nullptr;
  size_t scratchBytes_ = 0;
  uint64_t scratchPin_ = 0;        // the scratch memory's pin id; 0: not pinned
  std::set<uint64_t> registered_;  // handles of the user's registrations
  uint64_t nextPin_ = 1;           // user registrations and scratch pins share the numbering
  // Pins [p, p + n) in every transport under a fresh id (0 and an error: none pinned it).
  Result<uint64_t> pinEverywhere(void* p, size_t n);
  void unpinEverywhere(uint64_t id);
};

}  // namespace myriad
