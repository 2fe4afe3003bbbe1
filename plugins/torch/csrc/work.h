// WorkMyriad: one torch.distributed operation (or a coalesced batch of them) as the backend's progress
// thread runs it. Its Steps issue Myriad calls on the communicator's host stream; once the stream has
// synchronised, finish() copies staged results into the caller's tensors and the Future completes with
// the outputs, or both carry the DistBackendError built from Myriad's message.
#pragma once

#include <ATen/core/ivalue.h>

#include <chrono>
#include <exception>
#include <functional>
#include <string>
#include <torch/csrc/distributed/c10d/Work.hpp>
#include <vector>

#include "myriad/myriad.h"

namespace torch_myriad {

/// One Myriad call (or a few that belong together) and what to do with its results.
struct Step {
  std::function<myrResult_t(myrComm_t, myrStream_t)> issue;
  std::function<void()> finish;  // runs after the stream synchronised without error; may be empty
};

class WorkMyriad : public c10d::Work {
 public:
  WorkMyriad(c10d::OpType type, std::string name, int rank, std::chrono::milliseconds timeout);

  const std::string& name() const { return name_; }
  int rank() const { return rank_; }

  /// Adds a step and the tensors the Future will hold; called before the work is queued.
  void add(Step step, std::vector<at::Tensor> outputs);
  std::vector<Step>& steps() { return steps_; }
  void setSourceRank(int r) { sourceRank_ = r; }

  /// Called once by the progress thread.
  void complete();
  void fail(const std::string& message);

  bool wait(std::chrono::milliseconds timeout = kNoTimeout) override;
  void synchronize() override {}
  std::vector<at::Tensor> result() override { return outputs_; }
  c10::intrusive_ptr<c10::ivalue::Future> getFuture() override { return future_; }
  int sourceRank() const override;

 private:
  std::string name_;
  int rank_;
  std::chrono::milliseconds timeout_;  // used by wait() without an explicit timeout
  int sourceRank_ = -1;
  std::vector<Step> steps_;
  std::vector<at::Tensor> outputs_;
  c10::intrusive_ptr<c10::ivalue::Future> future_;
};

/// A DistBackendError carrying `message`, as an exception_ptr (what Work and Future store).
std::exception_ptr backendError(const std::string& message);

}  // namespace torch_myriad
