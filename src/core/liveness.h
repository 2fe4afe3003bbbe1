// Liveness: a communicator's channel for telling dead, late and stuck ranks apart, apart from the data path.
//
// Each rank has a UDP socket and a thread. It sends a heartbeat every MYRIAD_HEARTBEAT_MS to its
// neighbours in a fixed sparse graph (ring neighbours and binary-tree parent and children: at most five,
// whatever the size) and expects theirs; ranks of its own host are also watched through pidfds, which see
// an exit at once (a zombie included). A neighbour silent for MYRIAD_PEER_DEAD_MS, or a pidfd that fires,
// makes a fate ("rank 2 (node-a pid 6380) exited (pidfd)") that the rank sends to its neighbours at once
// and repeats in every later datagram, so that it floods the graph (which stays connected when a rank or a
// run of consecutive ranks is removed). A rank that destroys its communicator or exits normally says bye
// first: it has left, which is not a failure unless someone still waits on it. Each datagram leaves on
// several sockets (distinct source ports, distinct ECMP hashes), and a silent neighbour is probed through
// others before it is declared, so a failed link or path never makes a live rank look dead.
//
// Every datagram carries the sender's state (the call it last entered, whether it is inside it, whom it
// waits on): a rank stalled on a peer asks that peer directly (a query answered by its liveness thread),
// which is how core/comm_watch.cc tells a late rank (not in the call yet) from a stuck one (in the call,
// moving nothing) and follows the chain of waiters. Heartbeats never wait behind bulk data: they have a
// socket and a thread of their own.
#pragma once

#include <unistd.h>

#include <atomic>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <thread>
#include <unordered_map>
#include <vector>

#include "base/socket.h"
#include "core/liveness_wire.h"
#include "rendezvous/peer_info.h"

namespace myriad {

class Liveness {
 public:
  struct Options {
    int rank = 0;
    int nranks = 0;
    const std::vector<PeerInfo>* peers = nullptr;  // every rank's description, livenessAddr included; outlives this
    uint64_t commKey = 0;
    auth::Key tagKey{};  // the datagrams' HMAC key (tagKey() of the secret and tag)
    int heartbeatMs = 200;
    int deadMs = 2000;
    std::function<liveness::SelfState()> self;          // this rank's state; called on the liveness thread
    std::function<void(const liveness::Fate&)> onFate;  // another rank died or left; called once per rank
  };

  // Binds the socket on `host`'s address (any port) before the peer exchange, which publishes it.
  static Result<std::unique_ptr<Liveness>> bind(const SockAddr& host);
  ~Liveness();  // leave()

  const SockAddr& address() const { return addr_; }
  // Starts the thread, once the peers' descriptions are known.
  void start(Options options);
  // Says bye to the ranks that watch this one and stops the thread. Idempotent.
  void leave();
  // Tells every rank (flooded as a death is) that this communicator failed; from any thread.
  void announce(const liveness::Fate& f) {
    if (opt_.peers) learn(f);  // started (the options are set before the thread, never after)
  }
  // At a normal exit of the process (atexit): says bye without stopping anything. Not in a child forked
  // after the channel started (a data-loader worker), which is not this rank.
  void sayByeAtExitOf() {
    if (getpid() == owner_) sayBye();
  }

  // What is known of `peer`: its last state and how old it is; asks it afresh when older than maxAgeMs.
  struct View {
    bool known = false;
    liveness::SelfState state;
    int64_t ageMs = 0;
  };
  View view(int peer, int maxAgeMs);
  std::optional<liveness::Fate> fateOf(int peer) const;

  // The neighbours of `rank` in the watch graph of `nranks` ranks: symmetric, at most five, sorted.
  static std::vector<int> neighbours(int rank, int nranks);
  // The key datagrams of one communicator carry: its secret and tag, hashed.
  static uint64_t commKey(const uint8_t* secret, size_t secretBytes, const std::string& tag);
  static auth::Key tagKey(const uint8_t* secret, size_t secretBytes, const std::string& tag);
  // Datagrams dropped because their tag failed (another secret, an older build, or forged).
  uint64_t forgedDatagrams() const { return forged_.load(); }

 private:
  Liveness() = default;
  void run();
  void receive(Clock::time_point now);
  void handle(const liveness::Datagram& d, Clock::time_point now);
  void learn(const liveness::Fate& f);
  void sendTo(int peer, liveness::Kind kind, int about = -1);
  void checkNeighbours(Clock::time_point now);
  void checkProcesses();
  std::string describeSilence(int peer, int64_t silentMs) const;
  void sayBye();

  // Every datagram leaves on each of these sockets: distinct source ports, so distinct ECMP hashes, so one
  // failed link or path does not silence a live rank. fd_ (the first) also receives.
  static constexpr int kPaths = 8;
  std::vector<int> senders_;
  int fd_ = -1;      // UDP
  int wakeFd_ = -1;  // eventfd: queries wanted, or stop
  SockAddr addr_;
  Options opt_;
  std::vector<int> neighbours_;
  std::vector<Clock::time_point> lastHeard_;                 // by index in neighbours_ (directly, or vouched for)
  std::vector<Clock::time_point> probed_;                    // when others were last asked to probe it
  std::unordered_map<int, std::vector<int>> probesFor_;      // target -> the ranks that asked this one to probe it
  std::unordered_map<int64_t, Clock::time_point> answered_;  // a query or probe arrives once per path: answer once
  struct Local {
    int rank;
    int pidfd;
  };
  std::vector<Local> locals_;  // ranks of this host in other processes
  std::thread thread_;
  std::atomic<bool> stop_{false};
  std::atomic<uint64_t> forged_{0};
  bool left_ = false;
  pid_t owner_ = 0;               // the process that started the channel
  liveness::SelfState lastSelf_;  // as last sent (bye repeats it)

  mutable std::mutex mu_;  // guards what follows: shared with the callers of view() and fateOf()
  struct Known {
    liveness::SelfState state;
    Clock::time_point heard{};
    Clock::time_point asked{};
  };
  std::unordered_map<int, Known> known_;
  std::unordered_map<int, liveness::Fate> fates_;
  std::vector<int> fateOrder_;  // in the order learned, for repeating them in turn
  size_t fateTurn_ = 0;
  std::vector<int> wanted_;  // queries to send
};

}  // namespace myriad
