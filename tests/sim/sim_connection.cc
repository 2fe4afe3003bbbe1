// SimConnection: posting, arrival, matching and completion of messages between two ranks of a SimFabric.
#include "sim_connection.h"

#include <algorithm>
#include <cstring>

#include "exec/reduce.h"
#include "plan/dtype.h"

namespace myriad::sim {
namespace {

PeerInfo simPeer(int peer) {
  PeerInfo p;
  p.rank = peer;
  p.hostname = "sim";
  return p;
}

}  // namespace

SimConnection::SimConnection(SimFabric& fabric, int rank, int peer, bool rendezvous, bool combines)
    : Connection(simPeer(peer)),
      fabric_(fabric),
      rank_(rank),
      peer_(peer),
      rendezvous_(rendezvous),
      combines_(combines) {}

// Eight bytes a step (a byte-wise hash cost a fifth of the sim matrix's time).
uint64_t SimConnection::checksum(const void* p, size_t n) {
  const auto* b = static_cast<const uint8_t*>(p);
  uint64_t h = 0x9e3779b97f4a7c15ULL ^ n, w = 0;
  size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    std::memcpy(&w, b + i, 8);
    h = (h ^ w) * 0xff51afd7ed558ccdULL;
    h ^= h >> 29;
  }
  for (; i < n; ++i) h = (h ^ b[i]) * 1099511628211ULL;
  return h;
}

Status SimConnection::postSend(Request* r) {
  if (r->bytes && !r->buf) return internalError("sim: send of " + std::to_string(r->bytes) + " B with no buffer");
  r->done = false;
  SimConnection* in = fabric_.connection(peer_, rank_);  // the peer's end, which holds the inbound FIFO
  uint64_t seq = sendBase_ + sends_.size();
  uint64_t sum = fabric_.options().checkSendBuffers ? checksum(r->buf, r->bytes) : 0;
  sends_.push_back({r, false, false, sum});
  Message m;
  m.tag = r->tag, m.bytes = r->bytes, m.sendSeq = seq;
  if (rendezvous_)
    m.rdv = r;
  else if (r->bytes)
    m.data.assign(static_cast<const uint8_t*>(r->buf), static_cast<const uint8_t*>(r->buf) + r->bytes);
  uint64_t delay = fabric_.rng()() % static_cast<uint64_t>(fabric_.options().maxDelay + 1);
  uint64_t at = std::max(fabric_.now() + 1 + delay, in->lastArrival_);
  in->lastArrival_ = at;
  uint64_t inSeq = in->inBase_ + in->inbound_.size();
  in->inbound_.push_back(std::move(m));
  fabric_.schedule(at, SimFabric::EventKind::kArrive, in, inSeq);
  if (!rendezvous_) {
    uint64_t done = fabric_.now() + 1 + fabric_.rng()() % static_cast<uint64_t>(fabric_.options().maxDelay + 1);
    fabric_.schedule(done, SimFabric::EventKind::kSendDone, this, seq);
  }
  ++fabric_.posted_;
  fabric_.record(static_cast<uint64_t>(rank_) << 32 | static_cast<uint32_t>(peer_),
                 r->bytes ^ (uint64_t{r->tag} << 40));
  return Status::ok();
}

Status SimConnection::postRecv(Request* r) {
  if (r->bytes && !r->buf) return internalError("sim: receive of " + std::to_string(r->bytes) + " B with no buffer");
  if (r->combine.with && !combines_)
    return internalError("sim: a receive from rank " + std::to_string(peer_) +
                         " asks to combine on a connection that does not combine");
  r->done = false;
  recvs_.push_back(r);  // one that has arrived already is taken by the poll() that follows the post
  return Status::ok();
}

void SimConnection::arrive(uint64_t seq) {
  inbound_[static_cast<size_t>(seq - inBase_)].arrived = true;
  fabric_.markNews(rank_);
}

void SimConnection::sendDone(uint64_t seq) {
  sends_[static_cast<size_t>(seq - sendBase_)].complete = true;
  fabric_.markNews(rank_);
}

Status SimConnection::deliver(Message& m, Request* r) {
  if (m.tag != r->tag || m.bytes != r->bytes)
    return Status(Code::kInvalidUsage,
                  "sim: message from rank " + std::to_string(peer_) + " to rank " + std::to_string(rank_) +
                      " does not match this rank's call: got " + std::to_string(m.bytes) + " bytes with tag " +
                      std::to_string(m.tag) + ", expected " + std::to_string(r->bytes) + " bytes with tag " +
                      std::to_string(r->tag) + " (do all ranks issue the same collectives with the same counts?)");
  const void* src = m.rdv ? m.rdv->buf : m.data.data();
  SimConnection* sender = fabric_.connection(peer_, rank_);
  if (m.sendSeq >= sender->sendBase_ + sender->sendHead_) {  // the send is not done yet
    Send& s = sender->sends_[static_cast<size_t>(m.sendSeq - sender->sendBase_)];
    MYR_TRY(sender->checkUnchanged(s, "received"));
    s.delivered = true;
  }
  if (m.bytes) {
    if (r->combine.with) {
      const Combine& c = r->combine;
      reduce(r->buf, src, c.with, m.bytes / dtypeSize(c.dtype), c.dtype, c.op);
    } else {
      std::memmove(r->buf, src, m.bytes);
    }
  }
  r->done = true;
  if (m.rdv) sender->sendDone(m.sendSeq);
  fabric_.record(static_cast<uint64_t>(peer_) << 32 | static_cast<uint32_t>(rank_), fabric_.now());
  return Status::ok();
}

Status SimConnection::checkUnchanged(const Send& s, const char* until) const {
  if (!fabric_.options().checkSendBuffers || checksum(s.r->buf, s.r->bytes) == s.checksum) return Status::ok();
  return internalError("sim: rank " + std::to_string(rank_) + " changed the buffer of its send to rank " +
                       std::to_string(peer_) + " (tag " + std::to_string(s.r->tag) + ", " + std::to_string(s.r->bytes) +
                       " B) before the send was " + until + ": a step writes it without waiting for the send");
}

Status SimConnection::poll() {
  while (recvHead_ < recvs_.size() && inHead_ < inbound_.size() && inbound_[inHead_].arrived) {
    MYR_TRY(deliver(inbound_[inHead_], recvs_[recvHead_]));
    inbound_[inHead_++] = Message{};
    ++recvHead_;
  }
  if (inHead_ == inbound_.size()) inBase_ += inbound_.size(), inbound_.clear(), inHead_ = 0;
  if (recvHead_ == recvs_.size()) recvs_.clear(), recvHead_ = 0;
  while (sendHead_ < sends_.size() && sends_[sendHead_].complete) {
    Send& s = sends_[sendHead_++];
    if (!s.delivered) MYR_TRY(checkUnchanged(s, "done"));
    s.r->done = true;
  }
  if (sendHead_ == sends_.size()) sendBase_ += sends_.size(), sends_.clear(), sendHead_ = 0;
  return Status::ok();
}

std::string SimConnection::firstInbound() const {
  if (inHead_ == inbound_.size()) return "";
  const Message& m = inbound_[inHead_];
  return "tag " + std::to_string(m.tag) + ", " + std::to_string(m.bytes) + " B, " +
         (m.arrived ? "arrived" : "in flight");
}

}  // namespace myriad::sim
