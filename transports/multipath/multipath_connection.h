// MultipathConnection: a Connection to one peer over a path set of lanes from a LaneFactory (tcp sockets
// today, RDMA QPs later). Sends are cut into chunks that the lanes pull (scheduler.h); receives are
// reassembled in place from chunks in any order (chunk.h); the control loop (control.h) re-paths slow paths
// and failed lanes are quarantined with their chunks re-sent. Invariant: a send is done once every chunk is
// acknowledged (or, for a message at or below the split threshold, once its staged copy has been written),
// so the sender still holds every chunk that may have to be re-sent.
#pragma once

#include <poll.h>

#include <deque>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "core/transport.h"
#include "transports/multipath/byte_pool.h"
#include "transports/multipath/control.h"
#include "transports/multipath/lane.h"
#include "transports/multipath/path_set.h"
#include "transports/multipath/scheduler.h"
#include "transports/multipath/telemetry.h"

namespace myriad::mp {

struct MultipathOptions {
  int paths = 4;
  int spares = 2;
  bool adaptive = true;
  uint64_t splitBytes = 512 << 10;
  uint64_t chunkBytes = 64 << 10;
  uint64_t inflightBytes = 512 << 10;
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
  void drain(Clock::time_point deadline) override;
  // Unacknowledged chunks, or incoming lanes whose chunks we should hold (and say so) before our receive is
  // posted, so that the sender does not take a working path for a dead one; also for a while after the last
  // incoming lane was lost, so that the lanes the peer opens instead are adopted even while no step of ours
  // involves it (else it waits on us and we, later, on it).
  bool hasBackgroundWork() const override;

  PeerTelemetry telemetry() const;
  std::string describe() const override;

 private:
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
  struct SlotStats {
    uint64_t bytes = 0, roundBytes = 0;
    std::vector<double> roundService;
    LatencyWindow latency;
    Clock::time_point lastAck{}, lastHeld{}, openedAt{};
  };

  // LaneEvents
  Placement placeChunk(Lane& lane, const FrameHeader& h) override;
  void chunkArrived(Lane& lane, const FrameHeader& h, bool placed) override;
  void ackArrived(Lane& lane, const FrameHeader& h) override;
  void byeArrived(Lane& lane) override;

  SendOp* sendOp(uint64_t op);
  RecvOp* recvOp(uint64_t op);
  Status startRecv(RecvOp& op, const FrameHeader& h);
  void applyEarly(RecvOp& op);
  void ackOn(Lane* lane, const FrameHeader& data);
  void finishArrival(RecvOp& op, uint32_t index);

  Status adoptIncoming();
  Status openLanes();
  Status openSlot(bool active, int position);
  void findDueLanes();  // fills laneDue_: out_ lanes, then in_ lanes
  Status pollLanes();
  void promoteReady();
  void feed();
  void checkStalls();
  void maybeRound();
  void repath(int slot);
  int chooseSpare(int slot);
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
  PathSet paths_;
  PullScheduler sched_;
  ControlLoop ctl_;
  std::vector<std::unique_ptr<Lane>> out_;  // by slot; null once closed
  std::vector<SlotStats> stats_;
  std::vector<std::unique_ptr<Lane>> in_;
  std::map<Lane*, Reading> reading_;
  std::deque<SendOp> sends_;
  std::deque<RecvOp> recvs_;
  std::map<uint64_t, std::vector<Early>> early_;
  BytePool pool_;  // staged and early buffers, reused
  uint64_t nextSendOp_ = 0, nextRecvOp_ = 0;
  int pendingRequests_ = 0;
  Status fatal_;
  bool everReady_ = false;
  Clock::time_point created_ = Clock::now();
  Clock::time_point roundStart_ = Clock::now();
  Clock::time_point lastOpenTry_{};
  Clock::time_point incomingLost_{};
  Clock::time_point lastBackCheck_{};
  Clock::time_point lastStallCheck_{};
  std::vector<struct pollfd> pollFds_;  // findDueLanes' buffers, kept from poll to poll
  std::vector<size_t> pollWho_;
  std::vector<bool> laneDue_;
  int roundAcks_ = 0;
  int feedStart_ = 0;
  int refusedInRow_ = 0;
  double slowestOpenSec_ = 0;
  uint64_t bytesAcked_ = 0, chunksAcked_ = 0, quarantines_ = 0, repaths_ = 0, rerolls_ = 0;
};

}  // namespace myriad::mp
