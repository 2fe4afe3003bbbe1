// A one-directional shared-memory FIFO between two processes of one host: the sender creates and owns it,
// the receiver attaches when it first needs data and unlinks the name at once (so nothing is left in
// /dev/shm once both ends are mapped). A sender that goes before the receiver attached leaves the name only
// while unread slots wait for a live receiver (see ~ShmConnection). Slots are published with a release
// store of `head` and freed with a release store of `tail`; each side only ever writes its own counter.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <string>

#include "base/status.h"

namespace myriad {

// What a slot carries: a piece of the message inline, or (CMA) the address of the whole message in the
// sender's memory, which the receiver reads with process_vm_readv; the receiver's tail then acknowledges it.
enum class ShmSlotKind : uint32_t { kInline = 0, kRemote = 1 };

struct alignas(64) ShmSlotHeader {
  uint64_t msgBytes;    // size of the whole message
  uint64_t offset;      // where this piece goes in the message
  uint64_t pieceBytes;  // bytes in this slot (kInline)
  uint64_t remoteAddr;  // the message in the sender's address space (kRemote)
  uint32_t tag;
  ShmSlotKind kind;
};

// Whether the receiver may read the sender's memory (process_vm_readv needs ptrace permission, which
// containers and Yama often deny). The receiver probes once when it attaches and writes the answer.
enum class CmaState : uint32_t { kUnknown = 0, kAllowed = 1, kDenied = 2 };

struct ShmControl {
  std::atomic<uint32_t> magic;  // set last by the creator: the segment is initialised
  uint32_t slots;
  uint64_t slotBytes;
  uint64_t probeAddr;  // sender memory holding probeValue, for the receiver's CMA probe (0: no CMA)
  uint64_t probeValue;
  std::atomic<CmaState> cma;               // written by the receiver
  std::atomic<uint32_t> attached;          // set by the receiver once it has mapped the segment
  alignas(64) std::atomic<uint64_t> head;  // slots published by the sender
  alignas(64) std::atomic<uint64_t> tail;  // slots consumed by the receiver
};

class ShmSegment {
 public:
  ShmSegment() = default;
  ShmSegment(const ShmSegment&) = delete;
  ShmSegment& operator=(const ShmSegment&) = delete;
  ~ShmSegment();

  // Sender side: creates, sizes, pre-faults and initialises the segment. probeAddr (0: never use CMA)
  // points to sender memory holding probeValue.
  Status create(const std::string& name, uint32_t slots, size_t slotBytes, uint64_t probeAddr, uint64_t probeValue);
  // Receiver side: Code::kNotSupported while the segment does not exist yet.
  Status attach(const std::string& name, uint32_t slots, size_t slotBytes);

  bool mapped() const { return base_ != nullptr; }
  // Sender side: leave the name for a receiver that has yet to attach (it unlinks the name then).
  void keepName() { owner_ = false; }
  bool attachedByPeer() const { return control()->attached.load(std::memory_order_acquire) != 0; }
  ShmControl* control() const { return reinterpret_cast<ShmControl*>(base_); }
  ShmSlotHeader* slotHeader(uint64_t i) const;
  uint8_t* slotData(uint64_t i) const { return reinterpret_cast<uint8_t*>(slotHeader(i)) + sizeof(ShmSlotHeader); }
  uint32_t slots() const { return slots_; }
  size_t slotBytes() const { return slotBytes_; }

 private:
  static size_t totalBytes(uint32_t slots, size_t slotBytes);
  void* base_ = nullptr;
  size_t size_ = 0;
  uint32_t slots_ = 0;
  size_t slotBytes_ = 0;
  std::string name_;
  bool owner_ = false;  // the creator unlinks the name on destruction unless keepName()
};

}  // namespace myriad
