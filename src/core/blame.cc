// Blame for silence. A rank that waits on a silent peer cannot tell a hung peer from one that is itself
// waiting on a hung rank further on; so every rank that has been stalled for half the timeout publishes
// in the store whom it waits on, with a heartbeat counter it bumps while it keeps waiting ("stall.<rank>").
// At the timeout the waiter follows that chain: the first rank that publishes nothing, or whose heartbeat
// stops, is the one that is hung, and it is the one named on every survivor.
#include <algorithm>
#include <cstdio>
#include <thread>
#include <vector>

#include "core/comm.h"

namespace myriad {
namespace {

constexpr auto kStallEvery = std::chrono::milliseconds(200);
// Long enough for every live waiter to bump its heartbeat at least twice.
constexpr auto kHeartbeatCheck = std::chrono::milliseconds(500);

std::string stallKey(int rank) {
  return "stall." + std::to_string(rank);
}

struct StallRecord {
  int waitsOn = -1;  // -1: not waiting
  uint32_t beat = 0;
};

// The record of `rank`, or none (never stalled, or the store cannot say).
bool readStall(Store& store, int rank, StallRecord* out) {
  auto got = store.tryGet(stallKey(rank));
  if (!got.isOk()) return false;
  // Text "<peer> <beat>": a record is a diagnosis a person may read in the store, too.
  std::string text(got.value().begin(), got.value().end());
  long long peer = 0, beat = 0;
  if (std::sscanf(text.c_str(), "%lld %lld", &peer, &beat) != 2 || peer < -1 || beat < 0) return false;
  out->waitsOn = static_cast<int>(peer);
  out->beat = static_cast<uint32_t>(beat);
  return true;
}

// Best effort: blame is a diagnosis, not a protocol.
void writeStall(Store& store, int rank, int peer, uint32_t beat) {
  std::string text = std::to_string(peer) + " " + std::to_string(beat);
  store.set(stallKey(rank), Bytes(text.begin(), text.end())).ignore();
}

}  // namespace

void Comm::publishStall(int peer) {
  auto now = Clock::now();
  if (stallPublished_ && now - lastStallWrite_ < kStallEvery) return;
  writeStall(*store_, rank_, peer, ++stallBeat_);
  stallPublished_ = true;
  lastStallWrite_ = now;
}

void Comm::clearStall() {
  flight_->clearWait();
  if (!stallPublished_) return;
  writeStall(*store_, rank_, -1, ++stallBeat_);
  stallPublished_ = false;
}

Status Comm::blameSilence(int peer, long long silentMs) {
  std::string head = "rank " + std::to_string(rank_) + ": no data moved with " +
                     peers_[static_cast<size_t>(peer)].describe() + " for " + std::to_string(silentMs) +
                     " ms (MYRIAD_TIMEOUT_MS)";
  std::vector<int> chain;
  std::vector<uint32_t> beats;
  chain.reserve(static_cast<size_t>(nranks_) + 1);
  beats.reserve(static_cast<size_t>(nranks_) + 1);
  chain.push_back(peer);
  StallRecord rec;
  while (static_cast<int>(chain.size()) <= nranks_ && readStall(*store_, chain.back(), &rec) && rec.waitsOn >= 0) {
    bool loop = rec.waitsOn == rank_ || std::find(chain.begin(), chain.end(), rec.waitsOn) != chain.end();
    if (loop || rec.waitsOn >= nranks_) break;
    beats.push_back(rec.beat);
    chain.push_back(rec.waitsOn);
  }
  // chain[i] for i < beats.size() said it waits on chain[i+1]; a waiter whose heartbeat stands still is
  // not waiting any more: it stopped, and is the one to name.
  size_t culprit = chain.size() - 1;
  if (!beats.empty()) {
    std::this_thread::sleep_for(kHeartbeatCheck);
    for (size_t i = 0; i < beats.size(); ++i)
      if (!readStall(*store_, chain[i], &rec) || rec.beat == beats[i]) {
        culprit = i;
        break;
      }
  }
  const PeerInfo& hung = peers_[static_cast<size_t>(chain[culprit])];
  if (culprit == 0) return Status(Code::kTimeout, head + "; it is hung, partitioned, or not calling this collective");
  std::string via;
  for (size_t i = 0; i < culprit; ++i) via += "rank " + std::to_string(chain[i]) + " waits on ";
  return Status(Code::kTimeout, head + ": " + via + hung.describe() + ", which moved nothing; rank " +
                                    std::to_string(hung.rank) +
                                    " is hung, partitioned, or not calling this collective");
}

}  // namespace myriad
