// Schedule: one rank's plan of one call, as data — steps (send, receive, reduce, copy, scale, join), the
// steps each waits for, and buffer references (the call's own buffers, or offsets into scratch that the
// schedule declares by size). Algorithms build it from a CommView without touching any resource; an
// executor (src/exec) binds it to real buffers and connections and runs it. Ordering contract every executor
// keeps: messages to one peer leave in the order their steps were added, and messages from one peer are
// matched in the order their receives were added, so two ranks that add their steps for each other in the
// same logical order always agree, whatever the dependencies let run first. Reusing a buffer safely is
// expressed with dependencies.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <vector>

#include "base/status.h"
#include "myriad/myriad.h"

namespace myriad {

// A byte position in one of the buffers a schedule may touch. Arithmetic moves the offset only.
struct BufRef {
  enum Base : uint32_t {
    kNone = 0,
    kSend,     // the call's sendbuff
    kRecv,     // the call's recvbuff
    kScratch,  // the schedule's scratch memory (scratchBytes() of it)
    kLocal,    // the schedule's own small host bytes, filled at plan time (localBytes())
    kUser,     // kUser + i: the buffer of the call's i-th point-to-point operation (CollArgs::p2p)
  };
  uint32_t base = kNone;
  uint64_t offset = 0;

  bool valid() const { return base != kNone; }
  BufRef operator+(size_t bytes) const { return {base, offset + bytes}; }
  friend bool operator==(const BufRef&, const BufRef&) = default;
  static BufRef user(size_t i) { return {static_cast<uint32_t>(kUser + i), 0}; }
};

class Schedule {
 public:
  using Step = int32_t;
  using Deps = std::vector<Step>;

  explicit Schedule(std::string algorithm = "") : name_(std::move(algorithm)) {}

  static BufRef sendBuf() { return {BufRef::kSend, 0}; }
  static BufRef recvBuf() { return {BufRef::kRecv, 0}; }

  Step send(int peer, BufRef buf, size_t bytes, const Deps& deps = {});
  Step recv(int peer, BufRef buf, size_t bytes, const Deps& deps = {});
  // dst[i] = a[i] op b[i] for i < count (dst may alias a or b)
  Step reduce(BufRef dst, BufRef a, BufRef b, size_t count, myrDataType_t dtype, myrRedOp_t op, const Deps& deps = {});
  Step copy(BufRef dst, BufRef src, size_t bytes, const Deps& deps = {});
  // buf[i] /= n: the end of an average
  Step scaleAvg(BufRef buf, size_t count, myrDataType_t dtype, int n, const Deps& deps = {});
  // A receive reduced into dst on arrival: dst[i] = incoming[i] op b[i] for i < count (dst may alias b).
  // Where the connection combines on arrival (shm) it reduces straight out of its own buffer; elsewhere the
  // message lands in `staging` (count elements, the caller's scratch) and is reduced from there. Only for a
  // reduce that needs nothing but the message: the destination may be written while the message arrives.
  Step recvReduce(int peer, BufRef dst, BufRef b, BufRef staging, size_t count, myrDataType_t dtype, myrRedOp_t op,
                  const Deps& deps = {});
  // A step that does nothing but wait for `deps`: a join point that keeps dependency lists short.
  Step join(const Deps& deps);

  // Declares `bytes` of scratch (pre-faulted memory of the executor, valid while this schedule runs) and
  // returns its start. Call at most once.
  BufRef reserveScratch(size_t bytes);
  // Small bytes owned by the schedule itself, initialised now (e.g. this rank's count table, which steps
  // then send and receive). Call at most once.
  BufRef local(std::vector<uint8_t> init);

  // A plan in two stages, for algorithms whose plan depends on data the ranks exchange first (all-to-allv
  // counts): once every step is done, `next` is called with the local bytes and returns the next stage.
  using Next = std::function<Result<Schedule>(std::span<const uint8_t> local)>;
  void then(Next next) { next_ = std::move(next); }
  const Next& next() const { return next_; }

  enum class Kind : uint8_t { kSend, kRecv, kRecvReduce, kReduce, kCopy, kScale, kJoin };
  struct StepInfo {
    Kind kind;
    int peer = -1;
    BufRef dst{}, a{}, b{};
    BufRef staging{};  // recvReduce on a connection that does not combine
    size_t n = 0;      // bytes for send/recv/recvReduce/copy, elements for reduce/scale
    myrDataType_t dtype = myrFloat32;
    myrRedOp_t op = myrSum;
    int divisor = 1;
    int32_t firstDep = 0, numDeps = 0;  // into deps_
  };

  const std::string& name() const { return name_; }
  size_t size() const { return steps_.size(); }
  const std::vector<StepInfo>& steps() const { return steps_; }
  std::span<const Step> deps(Step i) const {
    const StepInfo& s = steps_[static_cast<size_t>(i)];
    return {deps_.data() + s.firstDep, static_cast<size_t>(s.numDeps)};
  }
  size_t scratchBytes() const { return scratchBytes_; }
  const std::vector<uint8_t>& localBytes() const { return local_; }
  static bool isMessage(Kind k) { return k == Kind::kSend || k == Kind::kRecv || k == Kind::kRecvReduce; }

  // A stable, line-per-step text form for people and tests: "  7 recv-reduce  from 3  recv+4096 ..." —
  // see schedule.cc for the exact format.
  std::string dump() const;

 private:
  Step add(StepInfo s, const Deps& deps);

  std::string name_;
  std::vector<StepInfo> steps_;
  std::vector<Step> deps_;
  size_t scratchBytes_ = 0;
  bool scratchTaken_ = false;
  std::vector<uint8_t> local_;
  Next next_;
};

// The name of a buffer base in dumps: "send", "recv", "scratch", "local", "user3".
std::string bufName(const BufRef& b);

}  // namespace myriad
