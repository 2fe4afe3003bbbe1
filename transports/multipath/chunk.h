// Chunks: how a message travels over a path set. A message of a connection has an op id (its place in the
// sender's order, which is also the receiver's order of receives); it is cut into chunks addressed by
// position (op, index, offset, length), so chunks may arrive in any order, over any lane, even twice.
// Reassembly counts distinct chunks per op; the first copy of a chunk is the one that counts.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace myriad::mp {

// One frame on a lane: a data chunk (payload of `length` bytes follows) or an ack (no payload).
struct FrameHeader {
  static constexpr uint32_t kMagic = 0x4b43594d;  // "MYCK"
  // kHeld: the receiver holds a chunk whose receive is not posted yet (no ack until it is placed), so the
  // sender knows the path works. kSmall: a whole message of at most a chunk, in one frame that is
  // not acknowledged by itself; kSmallAck: `op` holds the number of kSmall frames received on this lane so
  // far (acks of small messages come in batches, counted per lane; a lane delivers in order).
  enum Kind : uint32_t { kData = 1, kAck = 2, kBye = 3, kHeld = 4, kSmall = 5, kSmallAck = 6 };
  uint32_t magic = kMagic;
  uint32_t kind = kData;
  uint32_t tag = 0;     // the message's tag, checked against the receive
  uint32_t index = 0;   // chunk index within the op
  uint32_t chunks = 0;  // chunks of the op
  uint32_t lane = 0;    // the sender's lane slot that carried the chunk (an ack echoes it)
  uint64_t op = 0;      // op id within the connection, per direction
  uint64_t offset = 0;  // of this chunk in the message
  uint64_t length = 0;  // of this chunk
  uint64_t total = 0;   // bytes of the whole message
};
static_assert(sizeof(FrameHeader) == 56);

// A frame with a payload of `length` bytes (a chunk or a small message).
inline bool carriesData(uint32_t kind) {
  return kind == FrameHeader::kData || kind == FrameHeader::kSmall;
}
// A frame the receiver sends back about data: an ack, a held note, a batch ack of small messages.
inline bool isAckKind(uint32_t kind) {
  return kind == FrameHeader::kAck || kind == FrameHeader::kHeld || kind == FrameHeader::kSmallAck;
}
// The ack of data chunk `data`: its op, index and tag, and the sender's slot that carried it.
inline FrameHeader ackOf(const FrameHeader& data) {
  FrameHeader a;
  a.kind = FrameHeader::kAck;
  a.op = data.op;
  a.index = data.index;
  a.tag = data.tag;
  a.lane = data.lane;
  return a;
}

struct ChunkSpan {
  uint32_t index;
  uint64_t offset;
  uint64_t length;
};

// Chunks of a message of `total` bytes: one chunk (possibly empty) at or below `splitBytes`, else pieces
// of `chunkBytes` (the last one shorter).
std::vector<ChunkSpan> planChunks(uint64_t total, uint64_t splitBytes, uint64_t chunkBytes);

// Receive-side bookkeeping of one op.
class Reassembly {
 public:
  Reassembly() = default;
  Reassembly(uint64_t total, uint32_t chunks) : total_(total), got_(chunks, false) {}
  uint32_t chunks() const { return static_cast<uint32_t>(got_.size()); }
  // True the first time `index` arrives; false for a duplicate (or an index out of range).
  bool arrive(uint32_t index);
  bool seen(uint32_t index) const { return index < got_.size() && got_[index]; }
  bool complete() const { return done_ == got_.size(); }
  uint64_t total() const { return total_; }

 private:
  uint64_t total_ = 0;
  std::vector<bool> got_;
  size_t done_ = 0;
};

// A data header is well formed for a receive of `expectTotal` bytes: its chunk lies inside the message and
// its count agrees with `r` (the op's reassembly so far).
bool chunkFits(const FrameHeader& h, uint64_t expectTotal, const Reassembly& r);

}  // namespace myriad::mp
