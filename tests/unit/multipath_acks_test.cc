// Chunk acks of a multipath connection, over scripted lanes: the acks a poll owes leave together on one
// incoming lane, each naming the sender's slot that carried its chunk, and the sender credits an ack to that
// slot whichever lane brought it back.
#include <gtest/gtest.h>

#include <cstring>
#include <deque>
#include <map>
#include <numeric>
#include <vector>

#include "transports/multipath/multipath_connection.h"

namespace myriad::mp {
namespace {

// A lane the test scripts: frames put in `inbox` arrive at the next poll; frames the connection posts are kept.
class ScriptedLane final : public Lane {
 public:
  explicit ScriptedLane(uint16_t port) : port_(port) {}
  uint16_t port() const override { return port_; }
  bool ready() const override { return true; }
  bool canPost() const override { return true; }
  void postData(const FrameHeader& h, const void*) override { data.push_back(h); }
  void postControl(const FrameHeader& h) override { control.push_back(h); }
  bool cancel(uint64_t, uint32_t) override { return true; }
  bool holds(uint64_t) const override { return false; }
  bool flushed() const override { return true; }
  void flush() override {}
  void discardRest() override {}
  Status poll(LaneEvents& ev, bool) override {
    while (!inbox.empty()) {
      auto [h, payload] = std::move(inbox.front());
      inbox.pop_front();
      if (isAckKind(h.kind)) {
        ev.ackArrived(*this, h);
        continue;
      }
      Placement p = ev.placeChunk(*this, h);
      if (!p.discard) std::memcpy(p.dst, payload.data(), payload.size());
      ev.chunkArrived(*this, h, !p.discard);
    }
    return Status::ok();
  }

  std::deque<std::pair<FrameHeader, std::vector<uint8_t>>> inbox;
  std::vector<FrameHeader> data, control;

 private:
  uint16_t port_;
};

// Hands out the lanes it makes and keeps a pointer to each (the connection owns them).
class ScriptedFactory final : public LaneFactory {
 public:
  Result<std::unique_ptr<Lane>> open(uint16_t port) override {
    auto l = std::make_unique<ScriptedLane>(port);
    out.push_back(l.get());
    return std::unique_ptr<Lane>(std::move(l));
  }
  Result<std::unique_ptr<Lane>> accept() override {
    if (incoming.empty()) return std::unique_ptr<Lane>();
    auto l = std::move(incoming.front());
    incoming.pop_front();
    return std::unique_ptr<Lane>(std::move(l));
  }
  bool peerGone(const Status&) const override { return false; }

  std::vector<ScriptedLane*> out;
  std::deque<std::unique_ptr<ScriptedLane>> incoming;
};

constexpr uint64_t kChunk = 64 << 10;

MultipathOptions options() {
  MultipathOptions o;
  o.paths = 4;
  o.spares = 0;
  o.splitBytes = kChunk;  // a message above one chunk is cut into chunks
  o.chunkBytes = kChunk;
  o.inflightBytes = 8 * kChunk;
  o.seed = 7;
  o.commTag = "acks-test";
  return o;
}

PeerInfo peer() {
  PeerInfo p;
  p.rank = 1;
  p.hostname = "peer";
  return p;
}

TEST(MultipathAcks, APollsAcksLeaveTogetherOnOneLaneNamingTheCarryingSlot) {
  auto factory = std::make_unique<ScriptedFactory>();
  ScriptedFactory& f = *factory;
  std::vector<ScriptedLane*> in;
  for (uint16_t port = 40000; port < 40004; ++port) {
    f.incoming.push_back(std::make_unique<ScriptedLane>(port));
    in.push_back(f.incoming.back().get());
  }
  MultipathConnection c(peer(), options(), std::move(factory));
  std::vector<uint8_t> buf(4 * kChunk), sent(4 * kChunk);
  std::iota(sent.begin(), sent.end(), uint8_t{5});
  Request r{buf.data(), buf.size(), 9};
  ASSERT_TRUE(c.postRecv(&r).isOk());
  for (uint32_t i = 0; i < 4; ++i) {  // chunk i arrives on incoming lane i, sent from the peer's slot 3 - i
    FrameHeader h;
    h.kind = FrameHeader::kData;
    h.tag = 9;
    h.op = 0;
    h.index = i;
    h.chunks = 4;
    h.lane = 3 - i;
    h.offset = i * kChunk;
    h.length = kChunk;
    h.total = 4 * kChunk;
    in[i]->inbox.emplace_back(h, std::vector<uint8_t>(sent.begin() + h.offset, sent.begin() + h.offset + kChunk));
  }
  for (int i = 0; i < 3 && !r.done; ++i) ASSERT_TRUE(c.poll().isOk());
  ASSERT_TRUE(r.done);
  EXPECT_TRUE(buf == sent);
  int lanesWithAcks = 0;
  std::map<uint32_t, uint32_t> slotOf;  // chunk index -> slot named by its ack
  for (ScriptedLane* l : in) {
    if (!l->control.empty()) ++lanesWithAcks;
    for (const FrameHeader& a : l->control) {
      EXPECT_EQ(a.kind, FrameHeader::kAck);
      slotOf[a.index] = a.lane;
    }
  }
  EXPECT_EQ(lanesWithAcks, 1) << "the poll's acks were spread over the lanes the chunks came in on";
  ASSERT_EQ(slotOf.size(), 4u);
  for (uint32_t i = 0; i < 4; ++i) EXPECT_EQ(slotOf[i], 3 - i) << "chunk " << i;
}

TEST(MultipathAcks, AnAckCreditsTheSlotItNamesWhicheverLaneBringsIt) {
  auto factory = std::make_unique<ScriptedFactory>();
  ScriptedFactory& f = *factory;
  MultipathConnection c(peer(), options(), std::move(factory));
  std::vector<uint8_t> buf(4 * kChunk, 1);
  Request r{buf.data(), buf.size(), 3};
  ASSERT_TRUE(c.postSend(&r).isOk());
  size_t posted = 0;
  for (int i = 0; i < 20 && posted < 4; ++i) {
    ASSERT_TRUE(c.poll().isOk());
    posted = 0;
    for (ScriptedLane* l : f.out) posted += l->data.size();
  }
  ASSERT_EQ(posted, 4u) << "the chunks did not go out";
  // Every ack comes back on the first lane; each names the slot whose lane carried its chunk.
  std::map<uint16_t, uint64_t> expectBytes;
  for (size_t slot = 0; slot < f.out.size(); ++slot)
    for (const FrameHeader& h : f.out[slot]->data) {
      EXPECT_EQ(h.lane, slot);
      f.out[0]->inbox.emplace_back(ackOf(h), std::vector<uint8_t>{});
      expectBytes[f.out[slot]->port()] += h.length;
    }
  ASSERT_GE(expectBytes.size(), 2u) << "the chunks were not spread (the test needs acks from several slots)";
  for (int i = 0; i < 3 && !r.done; ++i) ASSERT_TRUE(c.poll().isOk());
  EXPECT_TRUE(r.done);
  const PeerTelemetry t = c.telemetry();
  for (const PathTelemetry& p : t.paths)
    EXPECT_EQ(p.bytes, expectBytes[p.port]) << "path from port " << p.port << " credited wrongly";
}

}  // namespace
}  // namespace myriad::mp
