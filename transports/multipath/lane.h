// Lane: one path of a path set, as a transport provides it. Outgoing lanes carry this rank's data frames to
// the peer and bring back its acks; incoming lanes bring the peer's data frames and carry our acks back.
// tcp: a socket bound to the path's source port; RDMA: a QP whose flow label yields it. Invariant: a lane
// never blocks; poll() advances its I/O and reports frames through LaneEvents, and an error means the lane
// is dead (the connection quarantines it), not that the connection failed.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "base/clock.h"
#include "base/status.h"
#include "transports/multipath/chunk.h"
#include "transports/multipath/coupled_window.h"

namespace myriad::mp {

class Lane;

// Where the payload of an arriving data chunk goes.
struct Placement {
  uint8_t* dst = nullptr;
  bool discard = true;  // read and drop it (a duplicate, or a frame that is wrong)
};

class LaneEvents {
 public:
  virtual Placement placeChunk(Lane& lane, const FrameHeader& h) = 0;
  // The payload is in place (or was dropped, as placeChunk said).
  virtual void chunkArrived(Lane& lane, const FrameHeader& h, bool placed) = 0;
  virtual void ackArrived(Lane& lane, const FrameHeader& h) = 0;
  virtual void byeArrived(Lane& lane) = 0;

 protected:
  ~LaneEvents() = default;
};

// What the transport itself knows of a path, beside our own acks: tcp asks the kernel whether the peer's
// stack still acknowledges the bytes sent. It tells a dead path (kStuck) from a peer that is merely slow to
// read (kDelivering), which our acks alone cannot.
enum class Delivery { kUnknown, kDelivering, kStuck };

class Lane {
 public:
  virtual ~Lane() = default;
  // The flow's source port (outgoing: ours; incoming: the peer's).
  virtual uint16_t port() const = 0;
  // Connected and able to carry frames.
  virtual bool ready() const = 0;
  // Room for another data frame now (the transport's own queue is short; caps are the scheduler's).
  virtual bool canPost() const = 0;
  // `payload` stays valid until the frame is written (holds(op) false) or cancelled.
  virtual void postData(const FrameHeader& h, const void* payload) = 0;
  // Frames without payload: ack, bye.
  virtual void postControl(const FrameHeader& h) = 0;
  // Lets go of a data frame's payload (another copy of the chunk was acknowledged): a frame that has not begun
  // to leave is dropped (true); one partly written is finished from the lane's own copy of its payload, so
  // that either way the lane reads the caller's buffer no more (holds(op) no longer counts it). A lane whose
  // path died mid-frame would otherwise keep the send from ever completing.
  virtual bool cancel(uint64_t op, uint32_t index) = 0;
  // A data frame of `op` is still queued or partly written.
  virtual bool holds(uint64_t op) const = 0;
  // Nothing left to write.
  virtual bool flushed() const = 0;
  // Advances the lane's I/O; `readable` false: the connection knows fd() has nothing to read, so only
  // writes (and bytes already buffered) are handled.
  virtual Status poll(LaneEvents& events, bool readable = true) = 0;
  // Writes what is queued, as far as the transport takes it now, and nothing else (no events). An error
  // shows again on the next poll().
  virtual void flush() = 0;
  virtual Delivery delivery() const { return Delivery::kUnknown; }
  // The path's losses and round trip as the transport's own congestion control sees them (tcp: TCP_INFO), for
  // the coupled windows; nothing where the transport cannot tell (then the lane's window stays at its cap).
  virtual std::optional<Congestion> congestion() const { return std::nullopt; }
  // A file descriptor whose readiness (poll(2)) says when poll() has something to do, or -1: always poll.
  virtual int fd() const { return -1; }
  // Bytes already read from fd() wait in the lane's buffer: poll() has something to do whatever fd() says.
  virtual bool hasBufferedInput() const { return false; }
  // The rest of the data chunk being read now is dropped, not placed (another copy of it arrived whole;
  // this one may resume long after, when the buffer is the application's again).
  virtual void discardRest() = 0;

  int slot = -1;         // the connection's path slot (outgoing lanes)
  uint64_t watchId = 0;  // the connection's name for fd() in its epoll set; 0: not in it
  bool bye = false;      // set by the lane when the peer's bye arrived (then the lane is let go)
  // Incoming lanes: small messages received here (FrameHeader::kSmall), and how many of them our last batch
  // ack covered; the bytes and the age of the oldest not covered yet.
  uint64_t smallIn = 0, smallAckedIn = 0, smallOwedBytes = 0;
  Clock::time_point smallOwedSince{};
};

class LaneFactory {
 public:
  virtual ~LaneFactory() = default;
  // Starts opening an outgoing lane from source port `port`; nullptr when that port is taken here.
  virtual Result<std::unique_ptr<Lane>> open(uint16_t port) = 0;
  // An incoming lane the peer opened, or nullptr for none now.
  virtual Result<std::unique_ptr<Lane>> accept() = 0;
  // Whether a failed lane's error means the peer is gone (e.g. connection refused), not just the path.
  virtual bool peerGone(const Status& laneError) const = 0;
};

}  // namespace myriad::mp
