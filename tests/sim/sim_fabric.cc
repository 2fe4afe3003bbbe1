// SimFabric: the virtual clock, the event queue (arrivals and buffered-send completions, ordered by round
// and then by post order), per-pair connection kinds drawn from the seed, and the report of what is left.
#include "sim_fabric.h"

#include "sim_connection.h"

namespace myriad::sim {

SimFabric::SimFabric(int nranks, const SimOptions& options)
    : nranks_(nranks),
      options_(options),
      rng_(options.seed * 0x9e3779b97f4a7c15ULL + 0x2545f4914f6cdd1dULL),
      conns_(static_cast<size_t>(nranks) * static_cast<size_t>(nranks)),
      hasNews_(static_cast<size_t>(nranks), 0) {}

SimFabric::~SimFabric() = default;

SimConnection* SimFabric::connection(int rank, int peer) {
  auto& c = conns_[static_cast<size_t>(rank) * static_cast<size_t>(nranks_) + static_cast<size_t>(peer)];
  if (!c) {
    // Drawn from a hash of the pair, not from rng_, so the kind does not depend on which end asks first.
    uint64_t h = options_.seed ^ (static_cast<uint64_t>(rank) * 0x9e3779b97f4a7c15ULL) ^
                 (static_cast<uint64_t>(peer) * 0xd1b54a32d192ed03ULL);
    h ^= h >> 31, h *= 0xbf58476d1ce4e5b9ULL, h ^= h >> 29;
    bool rendezvous = static_cast<int>(h % 100) < options_.rendezvousPercent;
    bool combines = static_cast<int>((h >> 20) % 100) < options_.combinePercent;
    c = std::make_unique<SimConnection>(*this, rank, peer, rendezvous, combines);
  }
  return c.get();
}

void SimFabric::schedule(uint64_t at, EventKind kind, SimConnection* conn, uint64_t seq) {
  events_.push(Event{at, order_++, kind, conn, seq});
}

void SimFabric::record(uint64_t a, uint64_t b) {
  hash_ = (hash_ ^ a) * 1099511628211ULL;
  hash_ = (hash_ ^ b) * 1099511628211ULL;
}

void SimFabric::fire(const Event& e) {
  if (e.kind == EventKind::kArrive)
    e.conn->arrive(e.seq);
  else
    e.conn->sendDone(e.seq);
}

void SimFabric::tick() {
  ++now_;
  while (!events_.empty() && events_.top().at <= now_) {
    Event e = events_.top();
    events_.pop();
    fire(e);
  }
}

bool SimFabric::advanceToNextEvent() {
  if (events_.empty()) return false;
  if (events_.top().at > now_ + 1) now_ = events_.top().at - 1;
  tick();
  return true;
}

void SimFabric::markNews(int rank) {
  if (hasNews_[static_cast<size_t>(rank)]) return;
  hasNews_[static_cast<size_t>(rank)] = 1;
  news_.push_back(rank);
}

std::vector<int> SimFabric::takeNews() {
  std::vector<int> out;
  out.swap(news_);
  for (int r : out) hasNews_[static_cast<size_t>(r)] = 0;
  return out;
}

std::string SimFabric::undelivered(size_t maxLines) const {
  std::string o;
  size_t lines = 0, more = 0;
  for (const auto& c : conns_) {
    if (!c || c->inboundCount() == 0) continue;
    if (lines++ >= maxLines) {
      ++more;
      continue;
    }
    o += (o.empty() ? "" : "\n") + std::string("    rank ") + std::to_string(c->peer().rank) + " -> rank " +
         std::to_string(c->rank()) + ": " + std::to_string(c->inboundCount()) +
         " message(s) not received (first: " + c->firstInbound() + ")";
  }
  if (more) o += "\n    ... and " + std::to_string(more) + " more pairs";
  return o;
}

}  // namespace myriad::sim
