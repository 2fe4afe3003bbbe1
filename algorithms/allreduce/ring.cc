// allreduce.ring — reduce-scatter then all-gather around the ring r -> r+1, pipelined in slices.
// The buffer is cut into n segments; segment q is cut into S slices of MYRIAD_CHUNK_BYTES. Step s of the
// reduce-scatter (s < n-1) sends segment r-s and receives segment r-s-1, which is reduced into the result
// (recv = received op own input); after it, rank r holds the final segment r+1 (divided by n for avg).
// Step s of the all-gather sends segment r+1-s and receives segment r-s straight into the result. Each
// (step, slice) is one message, a "unit"; unit u may be sent once unit u-S has been received and reduced,
// so slices flow through the ring while later ones are still arriving. At most W units are in flight per
// direction, which bounds the staging memory to W slices. Where the connection combines on arrival (shm),
// a reduce-scatter slice is reduced straight from the transport's buffer into the result, without staging.
#include <algorithm>
#include <cstring>
#include <vector>

#include "algorithms/algorithm.h"
#include "exec/dtype.h"
#include "exec/reduce.h"

namespace myriad {
namespace {

constexpr uint64_t kWindow = 4;

class RingAllReduceTask final : public Task {
 public:
  RingAllReduceTask(const CollArgs& args, Comm& comm) : a_(args), comm_(comm) {}

  Status plan() {
    n_ = comm_.nranks();
    r_ = comm_.rank();
    esize_ = dtypeSize(a_.dtype);
    if (n_ == 1) return Status::ok();
    chunk_ = std::max<size_t>(1, comm_.config().chunkBytes / esize_);
    size_t maxSeg = (a_.count + static_cast<size_t>(n_) - 1) / static_cast<size_t>(n_);
    slices_ = std::max<uint64_t>(1, (maxSeg + chunk_ - 1) / chunk_);
    units_ = 2 * static_cast<uint64_t>(n_ - 1) * slices_;
    staging_ = static_cast<uint8_t*>(comm_.scratch(kWindow * chunk_ * esize_));
    if (!staging_) return Status(Code::kSystemError, "allreduce.ring: cannot allocate staging memory");
    MYR_ASSIGN_OR_RETURN(next_, comm_.connection((r_ + 1) % n_));
    MYR_ASSIGN_OR_RETURN(prev_, comm_.connection((r_ + n_ - 1) % n_));
    fused_ = prev_->combinesOnReceive();
    return Status::ok();
  }

  Status start() override {
    if (n_ == 1 && a_.sendbuff != a_.recvbuff && a_.count) std::memcpy(a_.recvbuff, a_.sendbuff, a_.count * esize_);
    return Status::ok();
  }

  Status progress(bool* done) override {
    if (n_ == 1) return *done = true, Status::ok();
    for (int round = 0; round < 4; ++round) {
      bool moved = false;
      MYR_TRY(next_->poll());
      if (prev_ != next_) MYR_TRY(prev_->poll());
      while (sendDone_ < sendPosted_ && sends_[sendDone_ % kWindow].done) ++sendDone_, moved = true;
      while (processed_ < recvPosted_ && recvs_[processed_ % kWindow].done) process(processed_++), moved = true;
      while (recvPosted_ < units_ && recvPosted_ - processed_ < kWindow) {
        MYR_TRY(postRecv(recvPosted_++));
        moved = true;
      }
      while (sendPosted_ < units_ && sendPosted_ - sendDone_ < kWindow &&
             (sendPosted_ < slices_ || processed_ > sendPosted_ - slices_)) {
        MYR_TRY(postSend(sendPosted_++));
        moved = true;
      }
      if (!moved) break;
    }
    *done = sendDone_ == units_ && processed_ == units_;
    return Status::ok();
  }

 private:
  struct Span {
    size_t offset;  // elements
    size_t count;
  };

  int mod(int x) const { return ((x % n_) + n_) % n_; }
  size_t segOffset(int seg) const {
    size_t base = a_.count / static_cast<size_t>(n_), rem = a_.count % static_cast<size_t>(n_);
    return static_cast<size_t>(seg) * base + std::min<size_t>(static_cast<size_t>(seg), rem);
  }
  size_t segCount(int seg) const {
    return a_.count / static_cast<size_t>(n_) + (static_cast<size_t>(seg) < a_.count % static_cast<size_t>(n_) ? 1 : 0);
  }
  Span slice(int seg, uint64_t k) const {
    size_t begin = std::min(segCount(seg), static_cast<size_t>(k) * chunk_);
    size_t end = std::min(segCount(seg), begin + chunk_);
    return {segOffset(seg) + begin, end - begin};
  }
  bool reducing(uint64_t u) const { return u / slices_ < static_cast<uint64_t>(n_ - 1); }
  int sendSeg(uint64_t step) const {
    int s = static_cast<int>(step);
    return s < n_ - 1 ? mod(r_ - s) : mod(r_ + 1 - (s - (n_ - 1)));
  }
  int recvSeg(uint64_t step) const {
    int s = static_cast<int>(step);
    return s < n_ - 1 ? mod(r_ - s - 1) : mod(r_ - (s - (n_ - 1)));
  }
  uint8_t* at(void* base, size_t elems) const { return static_cast<uint8_t*>(base) + elems * esize_; }

  Status postSend(uint64_t u) {
    Span s = slice(sendSeg(u / slices_), u % slices_);
    Request& q = sends_[u % kWindow];
    // The first reduce-scatter step sends the input; every later step sends what this rank reduced or received.
    void* base = u < slices_ ? const_cast<void*>(a_.sendbuff) : a_.recvbuff;
    q = Request{at(base, s.offset), s.count * esize_, comm_.nextSendTag(next_->peer().rank), false};
    return next_->postSend(&q);
  }

  Status postRecv(uint64_t u) {
    Span s = slice(recvSeg(u / slices_), u % slices_);
    Request& q = recvs_[u % kWindow];
    bool staged = reducing(u) && !fused_;
    void* dst = staged ? staging_ + (u % kWindow) * chunk_ * esize_ : at(a_.recvbuff, s.offset);
    q = Request{dst, s.count * esize_, comm_.nextRecvTag(prev_->peer().rank), false};
    if (reducing(u) && fused_) q.combine = Combine{at(const_cast<void*>(a_.sendbuff), s.offset), a_.dtype, a_.op};
    return prev_->postRecv(&q);
  }

  void process(uint64_t u) {
    if (!reducing(u)) return;
    uint64_t step = u / slices_;
    Span s = slice(recvSeg(step), u % slices_);
    if (s.count == 0) return;
    uint8_t* dst = at(a_.recvbuff, s.offset);
    if (!fused_)
      reduce(dst, recvs_[u % kWindow].buf, at(const_cast<void*>(a_.sendbuff), s.offset), s.count, a_.dtype, a_.op);
    if (a_.op == myrAvg && step == static_cast<uint64_t>(n_ - 2)) scaleAvg(dst, s.count, a_.dtype, n_);
  }

  CollArgs a_;
  Comm& comm_;
  int n_ = 1, r_ = 0;
  size_t esize_ = 1, chunk_ = 1;
  uint64_t slices_ = 1, units_ = 0;
  uint8_t* staging_ = nullptr;
  Connection* next_ = nullptr;
  Connection* prev_ = nullptr;
  bool fused_ = false;  // prev_ combines reduce-scatter slices on arrival
  Request sends_[kWindow];
  Request recvs_[kWindow];
  uint64_t sendPosted_ = 0, sendDone_ = 0, recvPosted_ = 0, processed_ = 0;
};

class RingAllReduce final : public Algorithm {
 public:
  const char* name() const override { return "allreduce.ring"; }
  CollKind kind() const override { return CollKind::kAllReduce; }
  Status supports(const CollArgs&, const Comm&) const override { return Status::ok(); }
  Result<std::unique_ptr<Task>> plan(const CollArgs& args, Comm& comm) const override {
    auto t = std::make_unique<RingAllReduceTask>(args, comm);
    MYR_TRY(t->plan());
    return std::unique_ptr<Task>(std::move(t));
  }
};

}  // namespace

const Algorithm& allreduceRing() {
  static const RingAllReduce kAlgo;
  return kAlgo;
}

}  // namespace myriad
