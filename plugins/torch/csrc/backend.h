// BackendMyriad: a c10d::Backend over one Myriad communicator. Operations become WorkMyriad objects on
// the caller's thread. Works on CPU tensors run on one progress thread, which issues them on the
// communicator's host stream and completes them when the stream has synchronised; works on CUDA tensors
// are enqueued by the caller's thread on the backend's internal stream of their device and return at once.
// Invariant: every work takes a ticket when submitted and issues its Myriad calls only in ticket order,
// so every rank issues the same calls in the same order, whichever thread issues them and whatever waits.
// Receives from any source (recvAnysource) find their sender through the group's c10d Store: every send
// announces itself there (see announce()), and the any-source state is touched only by the turn's holder.
#pragma once

#include <chrono>
#include <condition_variable>
#include <deque>
#include <mutex>
#include <thread>
#include <torch/csrc/distributed/c10d/Backend.hpp>
#include <torch/csrc/distributed/c10d/Store.hpp>

#include "device_streams.h"
#include "myriad/myriad.h"
#include "work.h"

namespace torch_myriad {

class BackendMyriad : public c10d::Backend {
 public:
  /// Collective over the group: rank 0 puts a fresh unique id into `store`, every rank joins with it.
  static c10::intrusive_ptr<BackendMyriad> create(const c10::intrusive_ptr<c10d::Store>& store, int rank, int size,
                                                  std::chrono::milliseconds timeout);
  /// `store` (the group's c10d Store) carries the announcements of sends for recvAnysource; without one
  /// (a shrunk group) recvAnysource is refused.
  BackendMyriad(myrComm_t comm, int rank, int size, std::chrono::milliseconds timeout,
                c10::intrusive_ptr<c10d::Store> store = nullptr);
  ~BackendMyriad() override;

  const std::string getBackendName() const override { return "myriad"; }
  c10::intrusive_ptr<Options> getBackendOptions() override;
  bool supportsSplitting() const override { return true; }
  bool supportsCoalescing() const override { return true; }
  bool supportsShrinking() const override { return true; }
  void setTimeout(std::chrono::milliseconds timeout) override;
  void startCoalescing() override;
  c10::intrusive_ptr<c10d::Work> endCoalescing() override;
  c10::intrusive_ptr<c10d::Backend> split(const c10::intrusive_ptr<c10d::Store>& store, const std::vector<int>& ranks,
                                          const c10::intrusive_ptr<Options>& opts) override;
  /// myrCommShrink: the group without `ranksToExclude` (which must not call it and may be dead), in rank
  /// order. SHRINK_ABORT (1) fails the works in flight first, without waiting behind them; SHRINK_DEFAULT (0)
  /// runs after the works already submitted, like split. `optsOverride` sets the new group's timeout.
  c10::intrusive_ptr<c10d::Backend> shrink(const std::vector<int64_t>& ranksToExclude, int shrinkFlags = 0,
                                           const c10::intrusive_ptr<Options>& optsOverride = nullptr) override;
  void abort() override;
  void shutdown() override;

  // Collectives (collectives.cc).
  c10::intrusive_ptr<c10d::Work> broadcast(std::vector<at::Tensor>& tensors,
                                           const c10d::BroadcastOptions& opts = c10d::BroadcastOptions()) override;
  c10::intrusive_ptr<c10d::Work> allreduce(std::vector<at::Tensor>& tensors,
                                           const c10d::AllreduceOptions& opts = c10d::AllreduceOptions()) override;
  c10::intrusive_ptr<c10d::Work> allreduce_coalesced(
      std::vector<at::Tensor>& tensors,
      const c10d::AllreduceCoalescedOptions& opts = c10d::AllreduceCoalescedOptions()) override;
  c10::intrusive_ptr<c10d::Work> reduce(std::vector<at::Tensor>& tensors,
                                        const c10d::ReduceOptions& opts = c10d::ReduceOptions()) override;
  c10::intrusive_ptr<c10d::Work> allgather(std::vector<std::vector<at::Tensor>>& outputs,
                                           std::vector<at::Tensor>& inputs,
                                           const c10d::AllgatherOptions& opts = c10d::AllgatherOptions()) override;
  /// outputs[r][i] receives rank r's inputs[i]: one all-gather per input, issued as one Myriad group.
  c10::intrusive_ptr<c10d::Work> allgather_coalesced(
      std::vector<std::vector<at::Tensor>>& outputs, std::vector<at::Tensor>& inputs,
      const c10d::AllgatherOptions& opts = c10d::AllgatherOptions()) override;
  c10::intrusive_ptr<c10d::Work> _allgather_base(
      at::Tensor& output, at::Tensor& input, const c10d::AllgatherOptions& opts = c10d::AllgatherOptions()) override;
  c10::intrusive_ptr<c10d::Work> allgather_into_tensor_coalesced(
      std::vector<at::Tensor>& outputs, std::vector<at::Tensor>& inputs,
      const c10d::AllgatherOptions& opts = c10d::AllgatherOptions()) override;
  c10::intrusive_ptr<c10d::Work> gather(std::vector<std::vector<at::Tensor>>& outputs, std::vector<at::Tensor>& inputs,
                                        const c10d::GatherOptions& opts = c10d::GatherOptions()) override;
  c10::intrusive_ptr<c10d::Work> scatter(std::vector<at::Tensor>& outputs, std::vector<std::vector<at::Tensor>>& inputs,
                                         const c10d::ScatterOptions& opts = c10d::ScatterOptions()) override;
  c10::intrusive_ptr<c10d::Work> reduce_scatter(
      std::vector<at::Tensor>& outputs, std::vector<std::vector<at::Tensor>>& inputs,
      const c10d::ReduceScatterOptions& opts = c10d::ReduceScatterOptions()) override;
  c10::intrusive_ptr<c10d::Work> _reduce_scatter_base(
      at::Tensor& output, at::Tensor& input,
      const c10d::ReduceScatterOptions& opts = c10d::ReduceScatterOptions()) override;
  c10::intrusive_ptr<c10d::Work> reduce_scatter_tensor_coalesced(
      std::vector<at::Tensor>& outputs, std::vector<at::Tensor>& inputs,
      const c10d::ReduceScatterOptions& opts = c10d::ReduceScatterOptions()) override;
  c10::intrusive_ptr<c10d::Work> alltoall_base(at::Tensor& output, at::Tensor& input,
                                               std::vector<int64_t>& outputSplitSizes,
                                               std::vector<int64_t>& inputSplitSizes,
                                               const c10d::AllToAllOptions& opts = c10d::AllToAllOptions()) override;
  c10::intrusive_ptr<c10d::Work> alltoall(std::vector<at::Tensor>& outputs, std::vector<at::Tensor>& inputs,
                                          const c10d::AllToAllOptions& opts = c10d::AllToAllOptions()) override;
  c10::intrusive_ptr<c10d::Work> send(std::vector<at::Tensor>& tensors, int dstRank, int tag) override;
  c10::intrusive_ptr<c10d::Work> recv(std::vector<at::Tensor>& tensors, int srcRank, int tag) override;
  /// Receives the next message sent to this rank by any rank, in the order the senders announced their
  /// sends; the work's sourceRank() is the sender. Tags are not matched, as for recv.
  c10::intrusive_ptr<c10d::Work> recvAnysource(std::vector<at::Tensor>& tensors, int tag) override;
  c10::intrusive_ptr<c10d::Work> barrier(const c10d::BarrierOptions& opts = c10d::BarrierOptions()) override;

 private:
  /// A work for one operation, or the open coalesced batch while coalescing.
  c10::intrusive_ptr<WorkMyriad> begin(c10d::OpType type, const char* name);
  /// Issues or queues `work` (unless it is the open coalesced batch, issued by endCoalescing); returns it.
  c10::intrusive_ptr<c10d::Work> submit(const c10::intrusive_ptr<WorkMyriad>& work);
  void loop();
  void run(WorkMyriad& work);
  /// Enqueues a CUDA work on its device's internal stream, on the caller's thread; throws Myriad's message
  /// when a call fails.
  void enqueue(WorkMyriad& work);
  /// Runs the work's Steps' prepare(); the failure's message, "" when none. Called by the turn's holder.
  std::string prepare(WorkMyriad& work);
  /// The work's calls on `stream` (in one Myriad group when there are several); needs commMu_ and comm_.
  myrResult_t issue(WorkMyriad& work, myrStream_t stream);
  /// Counts a send to `dst` in the store, where dst's any-source receives look; called as the send is issued.
  void announce(int dst);
  /// The sender of a message for this rank that no receive has taken yet: polls the store until some rank
  /// announced more sends to this rank than this rank has received from it (at most the timeout). Only the
  /// turn's holder calls it, and counts the receive itself.
  int anySource();
  void awaitTurn(uint64_t ticket);
  void passTurn();
  std::string failure(const WorkMyriad& work, myrResult_t r);
  /// The communicator's asynchronous error as a message, "" when it has none.
  std::string asyncError();
  void stopThread();

  myrComm_t comm_;  // null once aborted or shut down; guarded by commMu_
  myrStream_t stream_ = nullptr;
  std::chrono::milliseconds timeout_;
  std::mutex commMu_;
  bool aborted_ = false;

  std::mutex queueMu_;
  std::condition_variable queueCv_;
  std::deque<c10::intrusive_ptr<WorkMyriad>> queue_;
  bool stop_ = false;
  uint64_t nextTicket_ = 0;  // guarded by queueMu_
  std::thread thread_;

  std::mutex turnMu_;
  std::condition_variable turnCv_;
  uint64_t turn_ = 0;  // the ticket whose calls may be issued now

  DeviceStreams streams_;

  c10::intrusive_ptr<WorkMyriad> coalesced_;  // the batch between startCoalescing and endCoalescing

  // Any-source receives. Key "myriad_sent/<d>/<s>" of the store counts the sends s issued to d; received_[s]
  // counts the receives this rank issued from s. Messages between two ranks match in call order, so while
  // the count in the store exceeds received_[s], s has a message for this rank that no receive will take.
  c10::intrusive_ptr<c10d::Store> store_;
  std::vector<int64_t> received_;  // touched only by the turn's holder (ticket order)
  int nextAnySource_ = 0;          // where the next poll starts, so that no sender starves
};

}  // namespace torch_myriad
