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

}  // namespace

Result<BootstrapModel> bootstrapModel(const BootstrapSpec& spec) {
  if (spec.nranks < 1) return invalidArgument("bootstrap model: " + std::to_string(spec.nranks) + " ranks");
  if (!(spec.descriptionBytes >= 0 && spec.addressBytes >= 0 && spec.storeHelloUs >= 0 && spec.storeOpUs >= 0))
    return invalidArgument("bootstrap model: sizes and costs must be non-negative numbers");
  const int n = spec.nranks;
  BootstrapModel m;
  while ((1 << m.rounds) < n) ++m.rounds;
  const auto un = static_cast<uint64_t>(n), rounds = static_cast<uint64_t>(m.rounds);
  m.storeRequests = un * (2 + rounds);  // try-get and set of its own address, a get per round
  m.storeBytesIn = un * static_cast<uint64_t>(spec.addressBytes);
  m.storeBytesOut = un * rounds * static_cast<uint64_t>(spec.addressBytes);
  const double base =
      (static_cast<double>(un) * spec.storeHelloUs + static_cast<double>(m.storeRequests) * spec.storeOpUs) * 1e-6;
  m.rootSeconds = base;
  for (int i = 0; i < 64; ++i) {  // the fixed point T = base + n polls(T / 2) op: polls grow slowly with T
    const uint64_t polls = un * abortPollsWithin(n, m.rootSeconds / 2);
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
