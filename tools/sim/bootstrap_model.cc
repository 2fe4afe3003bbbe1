// bootstrapModel: the store's counts in closed form and one rank's plan of connections and Bruck rounds,
// moved to every rank.
#include "tools/sim/bootstrap_model.h"

#include <algorithm>
#include <cmath>
#include <string>

#include "core/bootstrap_allgather.h"
#include "plan/schedule.h"

namespace myriad::netsim {
namespace {

// Message sizes of a connection's opening: the TCP handshake (no payload) and the hello's three frames.
constexpr size_t kOpen = 36, kAnswer = 56, kProof = 32;

// Rank 0's plan. Each round k has two connections: rank 0 opens one to `to` = -2^k mod n and accepts one from
// `from` = 2^k. The steps of both are interleaved in one fixed order, so that where to == from (2^(k+1) = n)
// the messages each way are in the same order at both ends.
Schedule rankZeroPlan(int n, int rounds, size_t description) {
  Schedule s("bootstrap.bruck");
  const BufRef buf = Schedule::recvBuf();
  Schedule::Step last = -1;  // the round before's last step
  std::vector<Schedule::Step> opened(static_cast<size_t>(rounds)), accepted(static_cast<size_t>(rounds));
  for (int k = 0; k < rounds; ++k) {  // connections and hellos: all at once
    const int d = 1 << k, to = (n - d % n) % n, from = d % n;
    auto o = s.send(to, buf, 0);                                        // SYN
    auto a = s.recv(from, buf, 0);                                      // SYN
    a = s.send(from, buf, 0, {a});                                      // SYN-ACK
    o = s.recv(to, buf, 0, {o});                                        // SYN-ACK
    o = s.send(to, buf, kOpen, {o});                                    // Open
    a = s.recv(from, buf, kOpen, {a});                                  // Open
    a = s.send(from, buf, kAnswer, {a});                                // Answer
    o = s.recv(to, buf, kAnswer, {o});                                  // Answer
    opened[static_cast<size_t>(k)] = s.send(to, buf, kProof, {o});      // Proof
    accepted[static_cast<size_t>(k)] = s.recv(from, buf, kProof, {a});  // Proof
  }
  for (int k = 0; k < rounds; ++k) {  // the rounds, one after the other
    const int d = 1 << k, to = (n - d % n) % n, from = d % n;
    const size_t bytes = static_cast<size_t>(std::min(d, n - d)) * description;
    Schedule::Deps sendDeps{opened[static_cast<size_t>(k)]}, recvDeps{accepted[static_cast<size_t>(k)]};
    if (last >= 0) sendDeps.push_back(last), recvDeps.push_back(last);
    const auto sent = s.send(to, buf, bytes, sendDeps);
    const auto got = s.recv(from, buf + static_cast<size_t>(d) * description, bytes, recvDeps);
    last = s.join({sent, got});
  }
  return s;
}

// Reads of the abort notice by a rank of n that has waited `seconds`, on the library's own schedule
// (abortNoticeWait, core/bootstrap_allgather.h).
uint64_t abortPollsWithin(int n, double seconds) {
  auto wait = [n](uint64_t k) { return 1e-3 * static_cast<double>(abortNoticeWait(n, static_cast<int>(k)).count()); };
  uint64_t polls = 0;
  for (double at = wait(0); at <= seconds; at += wait(polls)) ++polls;
  return polls;
}

// Reads of the abort notice by all n ranks when the root takes `seconds` to serve them all in turn: the one
// served last waits for nothing, the first for about all of it (their waits spread evenly, in 1,024 groups).
uint64_t abortPollsOfAll(int n, double seconds) {
  const int groups = std::min(n, 1024);
  double polls = 0;
  for (int g = 0; g < groups; ++g)
    polls += static_cast<double>(abortPollsWithin(n, seconds * (g + 0.5) / groups)) * n / groups;
  return static_cast<uint64_t>(std::llround(polls));
}

}  // namespace

Result<BootstrapModel> bootstrapModel(const BootstrapSpec& spec) {
  if (spec.nranks < 1) return invalidArgument("bootstrap model: " + std::to_string(spec.nranks) + " ranks");
  if (!(spec.descriptionBytes >= 0 && spec.addressBytes >= 0 && spec.storeHelloUs >= 0 && spec.storeOpUs >= 0 &&
        spec.storeKeyUs >= 0))
    return invalidArgument("bootstrap model: sizes and costs must be non-negative numbers");
  const int n = spec.nranks;
  BootstrapModel m;
  while ((1 << m.rounds) < n) ++m.rounds;
  const auto un = static_cast<uint64_t>(n), rounds = static_cast<uint64_t>(m.rounds);
  // Try-get and set of its own address, and one wait-all of the addresses of the ranks it sends to (one
  // key per round); a communicator of one rank asks nothing.
  m.storeRequests = n > 1 ? un * 3 : 0;
  m.storeWaitKeys = un * rounds;
  m.storeBytesIn = n > 1 ? un * static_cast<uint64_t>(spec.addressBytes) : 0;
  m.storeBytesOut = un * rounds * static_cast<uint64_t>(spec.addressBytes);
  const double base =
      (static_cast<double>(n > 1 ? un : 0) * spec.storeHelloUs + static_cast<double>(m.storeRequests) * spec.storeOpUs +
       static_cast<double>(m.storeWaitKeys) * spec.storeKeyUs) *
      1e-6;
  m.rootSeconds = base;
  for (int i = 0; i < 64; ++i) {  // the fixed point T = base + polls(T) op: polls grow slowly with T
    const uint64_t polls = abortPollsOfAll(n, m.rootSeconds);
    const double next = base + static_cast<double>(polls) * spec.storeOpUs * 1e-6;
    m.abortPolls = polls;
    if (next == m.rootSeconds) break;
    m.rootSeconds = next;
  }
  m.heldPerRank = un * static_cast<uint64_t>(spec.descriptionBytes);
  m.connectionsPerRank = 1 + 2 * m.rounds;
  m.plans = PlanSet("bootstrap.bruck");
  if (n > 1) {
    MYR_TRY(m.plans.add(rankZeroPlan(n, m.rounds, static_cast<size_t>(spec.descriptionBytes)), n));
    for (int r = 1; r < n; ++r) m.plans.addMoved(0, n);
  } else {
    MYR_TRY(m.plans.add(Schedule("bootstrap.bruck"), n));
  }
  return m;
}

}  // namespace myriad::netsim
