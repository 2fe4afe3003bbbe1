// MultipathConnection: a Connection to one peer over a path set of lanes from a LaneFactory (tcp sockets
// today, RDMA QPs later). A message larger than a chunk goes through the pull scheduler (scheduler.h): above
// the split size it is cut into chunks, and each chunk is acknowledged; receives are reassembled in place
// from chunks in any order (chunk.h); the control loop (control.h) re-paths slow paths and failed lanes are
// quarantined with their chunks re-sent. A small message (at most a chunk) costs what a plain connection
// costs: one frame, sent from a staged copy on the lowest open active lane while acks keep up (smallSlot),
// done once handed to the lane, acknowledged in batches (a count
// per lane, at most kSmallAckDelay late): no ack per message, no pull. Invariant: the sender holds a copy of
// every chunk and small message not acknowledged yet (a chunk in the caller's buffer: the send is not done
// until it is acknowledged), so that a lost lane's share can be re-sent.
#pragma once

#include <algorithm>
#include <deque>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "base/config.h"
#include "base/socket.h"
#include "core/transport.h"
#include "transports/multipath/byte_pool.h"
#include "transports/multipath/coupled_window.h"
#include "transports/multipath/lane.h"
#include "transports/multipath/path_keeper.h"
#include "transports/multipath/scheduler.h"
#include "transports/multipath/telemetry.h"

namespace myriad::mp {

struct MultipathOptions {
  std::string transport = "tcp";  // names the transport in errors, logs and telemetry
  int paths = 4;
  int spares = 2;
  bool adaptive = true;
  // MYRIAD_NET_PATHS=auto: once every path has measured alike for a long while (no collision to avoid, or a
  // fabric that sprays packets itself), the spares close and re-paths stop, until a path falls behind.
  bool standDown = false;
  uint64_t splitBytes = kDefaultNetSplitBytes;
  uint64_t chunkBytes = kDefaultNetChunkBytes;
  uint64_t inflightBytes = kDefaultNetInflightBytes;
  // Each active path's bytes in flight held to a congestion window coupled across the peer's paths
  // (coupled_window.h), where the lanes report their losses (tcp: TCP_INFO). MYRIAD_NET_COUPLED.
  bool coupled = false;
  PortRange ports;
  uint64_t seed = 1;
  int rank = 0;
  std::string commTag;
  int initTimeoutMs = 60000;
  ControlParams control;
};

class MultipathConnection final : public Connection, private LaneEvents {
 public:
  MultipathConnection(const PeerInfo& peer, MultipathOptions o, std::unique_ptr<LaneFactory> factory);
  ~MultipathConnection() override;
  Status postSend(Request* r) override;
  Status postRecv(Request* r) override;
  Status poll() override;
  Status checkAlive() override;
  bool busy() const override { return pendingRequests_ > 0; }
  bool drainStep() override;
  // Unacknowledged chunks, or incoming lanes whose chunks we should hold (and say so) before our receive is
  // posted, so that the sender does not take a working path for a dead one; also for a while after the last
  // incoming lane was lost, so that the lanes the peer opens instead are adopted even while no step of ours
  // involves it (else it waits on us and we, later, on it).
  bool hasBackgroundWork() const override;

  PeerTelemetry telemetry() const;
  std::string describe() const override;

 private:
  // Small messages: a batch ack leaves once it covers this many messages or bytes, or its oldest message is
  // this old. The sender stops handing small messages to lanes while this many bytes of them are
  // unacknowledged; the receiver holds its batch acks while it keeps this many early bytes of them (so the
  // sender's cap bounds what a receiver that is behind must hold: the two caps are equal on purpose).
  static constexpr uint64_t kSmallAckFrames = 32;
  static constexpr uint64_t kSmallAckBytes = 1 << 20;
  static constexpr auto kSmallAckDelay = std::chrono::microseconds(500);
  static constexpr uint64_t kSmallUnackedCap = 4 << 20;
  static constexpr uint64_t kEarlySmallCap = kSmallUnackedCap;

  static double secondsBetween(Clock::time_point a, Clock::time_point b) {
    return std::chrono::duration<double>(b - a).count();
  }

  struct SendOp {
    Request* r = nullptr;
    uint64_t op = 0;
    uint64_t total = 0;
    uint32_t tag = 0;
    Bytes staged;
    const uint8_t* data = nullptr;
    std::vector<ChunkSpan> chunks;
    uint32_t acked = 0;
    bool posted = false;  // some copy was handed to a lane
    bool reported = false;
  };
  struct RecvOp {
    Request* r = nullptr;
    uint64_t op = 0;
    Reassembly re;
    bool started = false;
    std::vector<uint32_t> claimed;  // chunks being read right now
    bool reported = false;
  };
  struct Early {
    FrameHeader h;
    Bytes data;
    Lane* lane = nullptr;
    bool complete = false;
  };
  struct Reading {  // what an incoming lane is reading into now
    uint64_t op;
    uint32_t index;
    bool early;
  };
  struct SmallSent {
    uint64_t op;
    Clock::time_point at;
  };
  struct SlotStats {
    std::deque<SmallSent> small;  // small messages posted on this lane, not acknowledged yet, in order
    uint64_t smallPosted = 0;     // small messages ever posted on this lane (batch acks count them)
    uint64_t smallBytes = 0;      // of the unacknowledged ones
    Clock::time_point lastAck{}, lastHeld{}, openedAt{};
    Clock::time_point congestionRead{};  // when the lane's congestion was last asked (couple)
  };

  // LaneEvents
  Placement placeChunk(Lane& lane, const FrameHeader& h) override;
  void chunkArrived(Lane& lane, const FrameHeader& h, bool placed) override;
  void ackArrived(Lane& lane, const FrameHeader& h) override;
  void byeArrived(Lane& lane) override;

  SendOp* sendOp(uint64_t op);
  RecvOp* recvOp(uint64_t op);
  Status startRecv(RecvOp& op, const FrameHeader& h, const Lane* lane);
  // "<transport> multipath: " and what follows; `lane` (may be null) names the path the peer sent on.
  Status remoteError(const std::string& what, const Lane* lane) const;
  void applyEarly(RecvOp& op);
  void oweAck(Lane* lane, const FrameHeader& data);  // sent by sendAcks at the end of the poll
  void sendAcks();
  void oweSmallAck(Lane& lane, const FrameHeader& h);
  void sendSmallAcks(bool all = false);  // all: every owed batch, due or not
  void smallAcked(int slot, uint64_t count);
  void requeueSmall(int slot);
  int smallSlot() const;
  // Messages up to this size are small: one staged frame each, done at once, acknowledged in batches.
  uint64_t smallBytes() const { return std::min(o_.splitBytes, o_.chunkBytes); }
  void feedSmall();
  void postChunk(Lane& lane, int slot, ChunkRef c);
  void couple(int slot, uint64_t bytes);
  void uncouple(int slot);
  void finishArrival(RecvOp& op, uint32_t index);

  Status adoptIncoming();
  Status openLanes();
  Status openSlot(bool active, int position);
  void findDueLanes();  // fills laneDue_ and laneReadable_: out_ lanes, then in_ lanes
  Status pollLanes();
  void promoteReady();
  void feed();
  void checkStalls();
  void maybeRound();
  void standDown();
  void standUp(int slot);
  void repath(int slot);
  void reroll(int spare, const std::string& why);
  void retire(int slot);
  Status quarantine(int slot, const Status& why);
  void closeDrained();
  void completeOps();
  int readySpare() const;
  double openTimeoutSec() const;
  bool anyHolds(uint64_t op) const;
  Clock::duration dupAfter(int slot) const;
  void fail(Status s);

  MultipathOptions o_;
  std::unique_ptr<LaneFactory> factory_;
  PathSet& paths() { return keeper_.set(); }
  const PathSet& paths() const { return keeper_.set(); }

  PathKeeper keeper_;  // the path set, the control loop, per-path counters and rounds
  PullScheduler sched_;
  CoupledWindows coupled_;                  // the active paths' congestion windows (o_.coupled)
  std::vector<std::unique_ptr<Lane>> out_;  // by slot; null once closed
  std::vector<SlotStats> stats_;
  std::vector<std::unique_ptr<Lane>> in_;
  std::map<Lane*, Reading> reading_;
  // Chunk acks owed, sent together at the end of a poll on one incoming lane (ackLane_, the last one a chunk
  // came in on): each names the sender's slot that carried the chunk, so any lane can carry it back.
  std::vector<FrameHeader> owedAcks_;
  Lane* ackLane_ = nullptr;
  std::deque<SendOp> sends_;
  std::deque<RecvOp> recvs_;
  std::map<uint64_t, std::vector<Early>> early_;
  uint64_t earlySmallBytes_ = 0;     // of small messages held early (their batch acks wait above a cap)
  std::deque<uint64_t> smallQueue_;  // staged small messages not on a lane yet, oldest first
  uint64_t smallUnacked_ = 0;        // bytes of small messages on lanes, not acknowledged yet
  uint64_t smallUnackedFrames_ = 0;  // and how many (zero-byte messages count here, not in the bytes)
  BytePool pool_;                    // staged and early buffers, reused
  uint64_t nextSendOp_ = 0, nextRecvOp_ = 0;
  int pendingRequests_ = 0, pendingSends_ = 0;
  Status fatal_;
  bool everReady_ = false;
  bool stoodDown_ = false;
  int roundsSinceVerdict_ = 0;  // stood down: rounds since the control loop last named a path
  Clock::time_point created_ = Clock::now();
  // The time of this poll: read when poll() starts and again after the lanes' I/O, and used for every
  // timestamp in between (a clock read costs as much as the rest of an idle poll).
  Clock::time_point now_ = Clock::now();
  static constexpr auto kUpkeepEvery = std::chrono::microseconds(100);
  Clock::time_point lastUpkeep_{};
  bool lanesOpening_ = true;  // some lane is opening (promoteReady looks at every poll until none is)
  Clock::time_point lastOpenTry_{};
  Clock::time_point incomingLost_{};
  Clock::time_point lastBackCheck_{};
  Clock::time_point lastStallCheck_{};
  Clock::time_point lastAccept_{};
  Fd epoll_;  // every lane's descriptor, so that a poll that finds nothing new costs one epoll_wait(2)
  uint64_t nextWatchId_ = 1;
  std::vector<bool> laneDue_, laneReadable_;  // findDueLanes' answers, kept from poll to poll
  std::vector<uint64_t> watchIds_;            // and each lane's epoll name (0: not watched)
  int feedStart_ = 0;
  struct FeedLane {
    uint64_t inFlight;  // the lane's bytes in flight (the feed order's key)
    int slot;
  };
  std::vector<FeedLane> feedOrder_;  // feed()'s lanes, kept from poll to poll
  int refusedInRow_ = 0;
  double slowestOpenSec_ = 0;
  uint64_t bytesAcked_ = 0, chunksAcked_ = 0, quarantines_ = 0, repaths_ = 0, rerolls_ = 0;
  uint64_t rerollDecisions_ = 0;  // decisions that re-rolled spares (one may re-roll several)
};

}  // namespace myriad::mp
