// WorkMyriad: one torch.distributed operation (or a coalesced batch of them). On CPU tensors the backend's
// progress thread issues its Steps on the communicator's host stream; once the stream has synchronised,
// finish() copies staged results into the caller's tensors and the Future completes with the outputs, or
// both carry the DistBackendError built from Myriad's message. On CUDA tensors the caller's thread enqueues
// the Steps (calls, then finish()'s copies) on the backend's internal stream and records an end event
// there: the work is complete when the event is, and waiting means the caller's stream waits for it.
#pragma once

#include <ATen/core/ivalue.h>
#include <c10/core/Event.h>
#include <c10/core/Stream.h>

#include <chrono>
#include <exception>
#include <functional>
#include <optional>
#include <string>
#include <torch/csrc/distributed/c10d/Work.hpp>
#include <vector>

#include "myriad/myriad.h"

namespace torch_myriad {

/// One Myriad call (or a few that belong together) and what to do with its results.
struct Step {
  std::function<myrResult_t(myrComm_t, myrStream_t)> issue;
  std::function<void()> finish;     // runs after the calls (host: synchronised; CUDA: enqueued); may be empty
  std::vector<at::Tensor> tensors;  // every tensor issue and finish touch: they decide the work's device
  // Runs in ticket order before the work's calls, without the communicator's lock (so it may wait: an
  // any-source receive finds its sender here); may throw, which fails the work. May be empty.
  std::function<void()> prepare;
};

class WorkMyriad : public c10d::Work {
 public:
  WorkMyriad(c10d::OpType type, std::string name, int rank, std::chrono::milliseconds timeout);

  const std::string& name() const { return name_; }
  int rank() const { return rank_; }

  /// Adds a step and the tensors the Future will hold; called before the work is queued. Throws when its
  /// tensors are on another device than the work's earlier ones (one call, one device).
  void add(Step step, std::vector<at::Tensor> outputs);
  std::vector<Step>& steps() { return steps_; }
  void setSourceRank(int r) { sourceRank_ = r; }
  /// The device of the work's tensors (none for a barrier or an empty batch).
  const std::optional<c10::Device>& device() const { return device_; }
  bool onCuda() const { return device_ && device_->is_cuda(); }
  uint64_t ticket() const { return ticket_; }
  void setTicket(uint64_t t) { ticket_ = t; }

  /// Host works: called once by the progress thread.
  void complete();
  void fail(const std::string& message);
  /// CUDA works: the Steps' calls are enqueued on `stream`, which is current; enqueues their finish(),
  /// records the end event and completes the Future as torch's CUDA futures do (its users' streams wait
  /// for the event). `asyncError` says what the communicator found since ("" when nothing).
  void enqueued(const c10::Stream& stream, std::function<std::string()> asyncError);

  bool isCompleted() override;
  /// Host works: blocks until done (at most the timeout). CUDA works, as ProcessGroupNCCL: the current
  /// stream waits for the end event; the host blocks only when `timeout` is given.
  bool wait(std::chrono::milliseconds timeout = kNoTimeout) override;
  /// CUDA works: the current stream waits for the end event. Host works: nothing to do.
  void synchronize() override;
  /// CUDA works: synchronize(). Host works: torch's way (the current stream waits for the host).
  void blockCurrentStream() override;
  std::vector<at::Tensor> result() override { return outputs_; }
  c10::intrusive_ptr<c10::ivalue::Future> getFuture() override { return future_; }
  int sourceRank() const override;

 private:
  std::string name_;
  int rank_;
  std::chrono::milliseconds timeout_;  // used by wait() without an explicit timeout
  int sourceRank_ = -1;
  uint64_t ticket_ = 0;  // the work's place in the backend's issue order
  std::optional<c10::Device> device_;
  std::vector<Step> steps_;
  std::vector<at::Tensor> outputs_;
  c10::intrusive_ptr<c10::ivalue::Future> future_;
  // CUDA works, from enqueued() on.
  std::optional<c10::Event> end_;
  std::function<std::string()> asyncError_;

  /// CUDA works: stores and throws the communicator's asynchronous error, if it has one.
  void throwIfAsyncError();
  [[noreturn]] void throwTimeout(std::chrono::milliseconds limit) const;
};

/// A DistBackendError carrying `message`, as an exception_ptr (what Work and Future store).
std::exception_ptr backendError(const std::string& message);

}  // namespace torch_myriad
