// Comm: one rank's view of a communicator. It owns a handful of parts — Config, the peers' descriptions,
// transports and lazily opened connections, the error state, scratch memory — and runs Tasks to
// completion with deadlines. Calls on one Comm execute one at a time, in the order they were issued.
#pragma once

#include <array>
#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include "core/config.h"
#include "core/cpu_waiters.h"
#include "core/error_state.h"
#include "core/peer_info.h"
#include "core/store.h"
#include "core/transport.h"
#include "core/unique_id.h"
#include "exec/task.h"
#include "topology/topology.h"

namespace myriad {

class TcpTransport;
class ShmTransport;

struct CommSetup {
  int rank = 0;
  int nranks = 0;
  std::shared_ptr<Store> store;
  Secret secret{};
  std::string commTag;  // unique per communicator; names shared-memory segments
  Config config;
  const std::atomic<bool>* cancel = nullptr;  // aborts a rendezvous in progress
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
  // Ranks grouped by host (in rank order within each host, hosts ordered by their lowest rank).
  const std::vector<std::vector<int>>& hosts() const { return hosts_; }
  int hostOf(int rank) const { return hostOf_[static_cast<size_t>(rank)]; }
  int localIndex(int rank) const { return localIndex_[static_cast<size_t>(rank)]; }
  // This rank's machine: detected once per process, or MYRIAD_TOPO_FILE completed by detection.
  const Topology& topology() const { return topology_; }

  // Runs `task` on the calling thread until done, a peer fails, a deadline passes or the communicator is
  // aborted. A failure is recorded in errors() (and published to the other ranks) before it is returned.
  Status run(Task& task);

  // Ok, or the error that stopped this communicator (its first error, or "aborted").
  Status usable() const;

  // Serialises calls: the executing thread holds this while a task runs.
  std::mutex& execMutex() { return execMutex_; }
  // Outstanding asynchronous calls (enqueued on streams); destroy waits for them.
  void addPending(int delta);
  void waitIdle();

  // Records a failure detected by this rank and tells the other ranks through the store.
  Status fail(Status s);

 private:
  Comm() = default;
  Status bootstrap(CommSetup& setup);
  Status openNetwork(const TransportContext& ctx, PeerInfo* self);
  void findStoreOwner();
  void groupHosts();
  Status learnedFailure(const Bytes& notice);
  Status failDetected(Status detected);
  Status checkWhileStalled(bool checkStore);
  // Stall records and blame for silence (core/blame.cc).
  void publishStall(int peer);
  void clearStall();
  Status blameSilence(int peer, long long silentMs);

  int rank_ = 0;
  int nranks_ = 0;
  Config config_;
  std::shared_ptr<Store> store_;
  std::string commTag_;
  Secret secret_{};
  int splits_ = 0;
  std::vector<PeerInfo> peers_;
  std::unique_ptr<TcpTransport> tcp_;
  std::unique_ptr<ShmTransport> shm_;
  std::unique_ptr<Transport> rdma_;                 // null: MYRIAD_NET=tcp, or no working device under auto
  std::vector<std::unique_ptr<Connection>> conns_;  // by rank, opened lazily
  std::vector<Connection*> open_;                   // the opened ones, for liveness checks
  std::string storeOwner_;                          // who hosts the tcp store, for messages
  bool oversubscribed_ = false;  // more ranks on this host than cores: sleep at once instead of spinning
  CpuWaiters cpuWaiters_;        // otherwise: spin on while nobody waits for a CPU
  ErrorState errors_;
  std::mutex execMutex_;
  std::mutex pendingMu_;
  std::condition_variable pendingCv_;
  int pending_ = 0;
  std::vector<uint32_t> sendTags_, recvTags_;
  std::vector<std::vector<int>> hosts_;
  std::vector<int> hostOf_, localIndex_;
  Topology topology_;
  bool stallPublished_ = false;  // this rank's stall record says it waits on someone
  uint32_t stallBeat_ = 0;
  Clock::time_point lastStallWrite_{};
  void* scratch_ = nullptr;
  size_t scratchBytes_ = 0;
  uint64_t scratchPin_ = 0;                      // the scratch memory's pin id; 0: not pinned
  std::set<uint64_t> registered_;                // handles of the user's registrations
  uint64_t nextPin_ = 1;                         // user registrations and scratch pins share the numbering
  std::array<Transport*, 3> transports() const;  // tcp, shm, rdma (null when not in use)
  // Pins [p, p + n) in every transport under a fresh id (0 and an error: none pinned it).
  Result<uint64_t> pinEverywhere(void* p, size_t n);
  void unpinEverywhere(uint64_t id);
};

}  // namespace myriad
