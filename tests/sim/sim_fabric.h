// SimFabric: an in-memory network for many ranks stepped on one thread, in rounds of a virtual clock. Each
// ordered pair (src, dst) is a FIFO: a message posted in round t arrives in a seeded round after t, never
// before one posted earlier on the same pair (the ordering contract), while pairs are independent, so
// arrivals interleave across peers and directions. Invariant: no threads, no sockets, no wall clock: the
// same seed and the same posts replay the same run, event for event.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <queue>
#include <random>
#include <string>
#include <vector>

#include "core/transport.h"

namespace myriad::sim {

struct SimOptions {
  uint64_t seed = 1;
  int maxDelay = 3;              // a message arrives 1 + [0, maxDelay] rounds after it is posted
  int rendezvousPercent = 50;    // pairs whose sends are done only once received (else buffered)
  int combinePercent = 50;       // connections that combine receives on arrival (combinesOnReceive)
  int skipPercent = 10;          // chance that a rank with news is left for the next round
  int maxStartDelay = 2;         // each rank starts its call after [0, maxStartDelay] rounds
  bool checkSendBuffers = true;  // a send's bytes must not change between its post and its completion
};

class SimConnection;

class SimFabric {
 public:
  SimFabric(int nranks, const SimOptions& options);
  ~SimFabric();
  int nranks() const { return nranks_; }
  const SimOptions& options() const { return options_; }
  uint64_t now() const { return now_; }
  std::mt19937_64& rng() { return rng_; }

  // rank's connection to peer, created on first use with its seeded kind (buffered or rendezvous sends,
  // combining or not).
  SimConnection* connection(int rank, int peer);
  // Next round: delivers what is due now, marking the ranks concerned as having news.
  void tick();
  // Moves the clock to the next scheduled event; false when nothing is scheduled.
  bool advanceToNextEvent();
  bool hasScheduled() const { return !events_.empty(); }
  // Ranks with news since the last call (each once), in the order they heard it.
  std::vector<int> takeNews();
  void markNews(int rank);
  // Messages posted so far, and a hash of every post and delivery with its round (two runs with one seed
  // have equal hashes).
  uint64_t messagesPosted() const { return posted_; }
  uint64_t eventHash() const { return hash_; }

  // Messages sent but not received, per pair: "rank 0 -> rank 1: 2 messages (first: tag 4, 16 B, arrived)".
  // "" when every channel is empty. At most maxLines lines.
  std::string undelivered(size_t maxLines = 8) const;

  // For SimConnection: at round `at`, message `seq` arrives at conn, or conn's send `seq` is done.
  enum class EventKind : uint8_t { kArrive, kSendDone };
  void schedule(uint64_t at, EventKind kind, SimConnection* conn, uint64_t seq);
  void record(uint64_t a, uint64_t b);  // folds an event into eventHash()

 private:
  struct Event {
    uint64_t at, order;
    EventKind kind;
    SimConnection* conn;
    uint64_t seq;
    bool operator>(const Event& o) const { return at != o.at ? at > o.at : order > o.order; }
  };
  void fire(const Event& e);

  int nranks_;
  SimOptions options_;
  std::mt19937_64 rng_;
  uint64_t now_ = 0, order_ = 0, posted_ = 0, hash_ = 1469598103934665603ULL;
  std::vector<std::unique_ptr<SimConnection>> conns_;  // rank * nranks + peer, null until used
  std::priority_queue<Event, std::vector<Event>, std::greater<>> events_;
  std::vector<uint8_t> hasNews_;
  std::vector<int> news_;

  friend class SimConnection;
};

}  // namespace myriad::sim
