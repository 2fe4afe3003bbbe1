// The collectives of BackendMyriad, each as Steps on a WorkMyriad. Arguments are checked here, on the
// caller's thread, so misuse raises at the call; Myriad runs on contiguous buffers: a non-contiguous
// tensor is staged in a contiguous copy and copied back in finish(). Data movement goes as bytes (so every
// dtype works); reductions use the type and operator dtype_map.h chose. The same code serves CPU and CUDA
// tensors: staging runs on the caller's current stream, which the work's stream waits for; each Step
// lists the tensors it touches, which decides the work's device.
#include <c10/util/Exception.h>

#include <algorithm>
#include <memory>
#include <numeric>
#include <string>
#include <thread>

#include "backend.h"
#include "dtype_map.h"

namespace torch_myriad {
namespace {

void checkTensor(const at::Tensor& t, const char* what) {
  TORCH_CHECK(t.layout() == at::kStrided, "myriad: ", what, " needs dense (strided) tensors");
  if (t.device().is_cpu()) return;
  TORCH_CHECK(kCudaBuilt || !t.device().is_cuda(), "myriad: ", what, " got a tensor on ", t.device().str(),
              ", but this torch_myriad was built against a torch without CUDA: it takes CPU tensors only");
  TORCH_CHECK(t.device().is_cuda(), "myriad: ", what, " needs CPU or CUDA tensors, got one on ", t.device().str());
}

const at::Tensor& single(const std::vector<at::Tensor>& v, const char* what) {
  TORCH_CHECK(v.size() == 1, "myriad: ", what, " takes one tensor per process, got ", v.size());
  checkTensor(v[0], what);
  return v[0];
}

void checkSame(const at::Tensor& a, const at::Tensor& b, const char* what) {
  TORCH_CHECK(a.scalar_type() == b.scalar_type(), "myriad: ", what, ": dtypes differ (", a.scalar_type(), " and ",
              b.scalar_type(), ")");
  TORCH_CHECK(a.numel() == b.numel(), "myriad: ", what, ": element counts differ (", a.numel(), " and ", b.numel(),
              ")");
}

void checkRoot(int root, int size, const char* what) {
  TORCH_CHECK(root >= 0 && root < size, "myriad: ", what, ": root ", root, " is outside the group of ", size);
}

// Copies `staged` back into `user` when they are different tensors (a non-contiguous user tensor).
std::function<void()> copyBack(const at::Tensor& user, const at::Tensor& staged) {
  if (staged.is_same(user)) return nullptr;
  return [user, staged]() mutable { user.copy_(staged); };
}

size_t bytesOf(const at::Tensor& t) {
  return t.numel() * t.element_size();
}

// Rows of dim 0, each `rowBytes` long, as byte counts and displacements for myrAllToAllv.
void splitBytes(const at::Tensor& t, const std::vector<int64_t>& splits, int size, std::vector<size_t>& counts,
                std::vector<size_t>& displs, const char* which) {
  const int64_t rows = t.dim() == 0 ? 1 : t.size(0);
  const size_t rowBytes = rows == 0 ? 0 : bytesOf(t) / rows;
  counts.assign(size, 0);
  displs.assign(size, 0);
  if (splits.empty()) {
    TORCH_CHECK(rows % size == 0, "myriad: alltoall_base: ", which, " dim 0 (", rows, ") is not divisible by ", size);
    for (int p = 0; p < size; ++p) counts[p] = rowBytes * (rows / size);
  } else {
    TORCH_CHECK(static_cast<int>(splits.size()) == size, "myriad: alltoall_base: ", which, " split sizes have ",
                splits.size(), " entries for a group of ", size);
    TORCH_CHECK(std::accumulate(splits.begin(), splits.end(), int64_t{0}) == rows, "myriad: alltoall_base: ", which,
                " split sizes do not add up to dim 0 (", rows, ")");
    for (int p = 0; p < size; ++p) counts[p] = rowBytes * splits[p];
  }
  for (int p = 1; p < size; ++p) displs[p] = displs[p - 1] + counts[p - 1];
}

at::Tensor flatBytes(const at::Tensor& t) {
  return t.contiguous().reshape({-1}).view(at::kByte);
}

}  // namespace

c10::intrusive_ptr<c10d::Work> BackendMyriad::broadcast(std::vector<at::Tensor>& tensors,
                                                        const c10d::BroadcastOptions& opts) {
  const at::Tensor& t = single(tensors, "broadcast");
  checkRoot(opts.rootRank, size_, "broadcast");
  auto work = begin(c10d::OpType::BROADCAST, "broadcast");
  at::Tensor buf = t.contiguous();
  const int root = opts.rootRank;
  work->add(Step{[buf, root](myrComm_t c, myrStream_t s) {
                   return myrBroadcast(buf.data_ptr(), buf.data_ptr(), bytesOf(buf), myrUint8, root, c, s);
                 },
                 copyBack(t, buf),
                 {buf}},
            {t});
  return submit(work);
}

c10::intrusive_ptr<c10d::Work> BackendMyriad::allreduce(std::vector<at::Tensor>& tensors,
                                                        const c10d::AllreduceOptions& opts) {
  const at::Tensor& t = single(tensors, "allreduce");
  const ReducePlan plan = planReduce(t.scalar_type(), opts.reduceOp);
  auto work = begin(c10d::OpType::ALLREDUCE, "allreduce");
  at::Tensor buf = reduceInput(t, plan);
  work->add(Step{[buf, plan](myrComm_t c, myrStream_t s) {
                   return myrAllReduce(buf.data_ptr(), buf.data_ptr(), reduceCount(buf, plan), plan.type, plan.op, c,
                                       s);
                 },
                 copyBack(t, buf),
                 {buf}},
            {t});
  return submit(work);
}

c10::intrusive_ptr<c10d::Work> BackendMyriad::allreduce_coalesced(std::vector<at::Tensor>& tensors,
                                                                  const c10d::AllreduceCoalescedOptions& opts) {
  TORCH_CHECK(!tensors.empty(), "myriad: allreduce_coalesced of no tensors");
  auto work = begin(c10d::OpType::ALLREDUCE_COALESCED, "allreduce_coalesced");
  for (const at::Tensor& t : tensors) {
    checkTensor(t, "allreduce_coalesced");
    const ReducePlan plan = planReduce(t.scalar_type(), opts.reduceOp);
    at::Tensor buf = reduceInput(t, plan);
    work->add(Step{[buf, plan](myrComm_t c, myrStream_t s) {
                     return myrAllReduce(buf.data_ptr(), buf.data_ptr(), reduceCount(buf, plan), plan.type, plan.op, c,
                                         s);
                   },
                   copyBack(t, buf),
                   {buf}},
              {t});
  }
  return submit(work);
}

c10::intrusive_ptr<c10d::Work> BackendMyriad::reduce(std::vector<at::Tensor>& tensors,
                                                     const c10d::ReduceOptions& opts) {
  const at::Tensor& t = single(tensors, "reduce");
  checkRoot(opts.rootRank, size_, "reduce");
  const ReducePlan plan = planReduce(t.scalar_type(), opts.reduceOp);
  auto work = begin(c10d::OpType::REDUCE, "reduce");
  at::Tensor buf = reduceInput(t, plan);
  const int root = opts.rootRank;
  const bool isRoot = rank_ == root;
  work->add(Step{[buf, plan, root, isRoot](myrComm_t c, myrStream_t s) {
                   return myrReduce(buf.data_ptr(), isRoot ? buf.data_ptr() : nullptr, reduceCount(buf, plan),
                                    plan.type, plan.op, root, c, s);
                 },
                 isRoot ? copyBack(t, buf) : nullptr,
                 {buf}},
            {t});
  return submit(work);
}

c10::intrusive_ptr<c10d::Work> BackendMyriad::allgather(std::vector<std::vector<at::Tensor>>& outputs,
                                                        std::vector<at::Tensor>& inputs,
                                                        const c10d::AllgatherOptions& /*opts*/) {
  const at::Tensor& in = single(inputs, "allgather");
  TORCH_CHECK(outputs.size() == 1 && static_cast<int>(outputs[0].size()) == size_,
              "myriad: allgather needs one list of ", size_, " output tensors");
  for (const at::Tensor& o : outputs[0]) {
    checkTensor(o, "allgather");
    checkSame(o, in, "allgather");
  }
  auto work = begin(c10d::OpType::ALLGATHER, "allgather");
  at::Tensor src = in.contiguous();
  std::vector<int64_t> shape{size_};
  for (int64_t d : in.sizes()) shape.push_back(d);
  at::Tensor stage = at::empty(shape, in.options().memory_format(at::MemoryFormat::Contiguous));
  std::vector<at::Tensor> outs = outputs[0];
  work->add(Step{[src, stage](myrComm_t c, myrStream_t s) {
                   return myrAllGather(src.data_ptr(), stage.data_ptr(), bytesOf(src), myrUint8, c, s);
                 },
                 [outs, stage]() mutable {
                   for (size_t r = 0; r < outs.size(); ++r) outs[r].copy_(stage[r]);
                 },
                 {src, stage}},
            outs);
  return submit(work);
}

c10::intrusive_ptr<c10d::Work> BackendMyriad::allgather_coalesced(std::vector<std::vector<at::Tensor>>& outputs,
                                                                  std::vector<at::Tensor>& inputs,
                                                                  const c10d::AllgatherOptions& opts) {
  TORCH_CHECK(static_cast<int>(outputs.size()) == size_, "myriad: allgather_coalesced needs ", size_,
              " output lists (one per rank), got ", outputs.size());
  for (const auto& list : outputs) {
    TORCH_CHECK(list.size() == inputs.size(), "myriad: allgather_coalesced: an output list has ", list.size(),
                " tensors for ", inputs.size(), " inputs");
  }
  auto outer = coalesced_;
  if (!outer) startCoalescing();
  try {
    for (size_t i = 0; i < inputs.size(); ++i) {
      std::vector<std::vector<at::Tensor>> gathered(1);
      for (const auto& list : outputs) gathered[0].push_back(list[i]);
      std::vector<at::Tensor> input{inputs[i]};
      allgather(gathered, input, opts);
    }
  } catch (...) {
    if (!outer) coalesced_.reset();  // a refused input leaves no batch open
    throw;
  }
  return outer ? c10::intrusive_ptr<c10d::Work>(outer) : endCoalescing();
}

c10::intrusive_ptr<c10d::Work> BackendMyriad::_allgather_base(at::Tensor& output, at::Tensor& input,
                                                              const c10d::AllgatherOptions& /*opts*/) {
  checkTensor(output, "all_gather_into_tensor");
  checkTensor(input, "all_gather_into_tensor");
  TORCH_CHECK(output.scalar_type() == input.scalar_type() && output.numel() == input.numel() * size_,
              "myriad: all_gather_into_tensor needs an output of the input's dtype and ", size_, " times its elements");
  auto work = begin(c10d::OpType::_ALLGATHER_BASE, "all_gather_into_tensor");
  at::Tensor src = input.contiguous();
  at::Tensor dst = output.contiguous();
  work->add(Step{[src, dst](myrComm_t c, myrStream_t s) {
                   return myrAllGather(src.data_ptr(), dst.data_ptr(), bytesOf(src), myrUint8, c, s);
                 },
                 copyBack(output, dst),
                 {src, dst}},
            {output});
  return submit(work);
}

c10::intrusive_ptr<c10d::Work> BackendMyriad::allgather_into_tensor_coalesced(std::vector<at::Tensor>& outputs,
                                                                              std::vector<at::Tensor>& inputs,
                                                                              const c10d::AllgatherOptions& opts) {
  TORCH_CHECK(outputs.size() == inputs.size(), "myriad: allgather_into_tensor_coalesced: ", outputs.size(),
              " outputs for ", inputs.size(), " inputs");
  auto outer = coalesced_;
  if (!outer) startCoalescing();
  for (size_t i = 0; i < inputs.size(); ++i) _allgather_base(outputs[i], inputs[i], opts);
  return outer ? c10::intrusive_ptr<c10d::Work>(outer) : endCoalescing();
}

c10::intrusive_ptr<c10d::Work> BackendMyriad::gather(std::vector<std::vector<at::Tensor>>& outputs,
                                                     std::vector<at::Tensor>& inputs, const c10d::GatherOptions& opts) {
  const at::Tensor& in = single(inputs, "gather");
  const int root = opts.rootRank;
  checkRoot(root, size_, "gather");
  const bool isRoot = rank_ == root;
  std::vector<at::Tensor> outs;
  if (isRoot) {
    TORCH_CHECK(outputs.size() == 1 && static_cast<int>(outputs[0].size()) == size_,
                "myriad: gather needs one list of ", size_, " output tensors on the root");
    for (const at::Tensor& o : outputs[0]) {
      checkTensor(o, "gather");
      checkSame(o, in, "gather");
    }
    outs = outputs[0];
  } else {
    TORCH_CHECK(outputs.empty() || (outputs.size() == 1 && outputs[0].empty()),
                "myriad: gather takes output tensors on the root only");
  }
  auto work = begin(c10d::OpType::GATHER, "gather");
  at::Tensor src = in.contiguous();
  at::Tensor stage;
  if (isRoot) {
    std::vector<int64_t> shape{size_};
    for (int64_t d : in.sizes()) shape.push_back(d);
    stage = at::empty(shape, in.options().memory_format(at::MemoryFormat::Contiguous));
  }
  std::function<void()> fin;
  if (isRoot) {
    fin = [outs, stage]() mutable {
      for (size_t r = 0; r < outs.size(); ++r) outs[r].copy_(stage[r]);
    };
  }
  work->add(Step{[src, stage, root](myrComm_t c, myrStream_t s) {
                   return myrGather(src.data_ptr(), stage.defined() ? stage.data_ptr() : nullptr, bytesOf(src),
                                    myrUint8, root, c, s);
                 },
                 fin,
                 {src, stage}},
            outs);
  return submit(work);
}

c10::intrusive_ptr<c10d::Work> BackendMyriad::scatter(std::vector<at::Tensor>& outputs,
                                                      std::vector<std::vector<at::Tensor>>& inputs,
                                                      const c10d::ScatterOptions& opts) {
  const at::Tensor& out = single(outputs, "scatter");
  const int root = opts.rootRank;
  checkRoot(root, size_, "scatter");
  const bool isRoot = rank_ == root;
  at::Tensor stage;
  if (isRoot) {
    TORCH_CHECK(inputs.size() == 1 && static_cast<int>(inputs[0].size()) == size_, "myriad: scatter needs one list of ",
                size_, " input tensors on the root");
    for (const at::Tensor& i : inputs[0]) {
      checkTensor(i, "scatter");
      checkSame(i, out, "scatter");
    }
    stage = at::stack(inputs[0]);
  } else {
    TORCH_CHECK(inputs.empty() || (inputs.size() == 1 && inputs[0].empty()),
                "myriad: scatter takes input tensors on the root only");
  }
  auto work = begin(c10d::OpType::SCATTER, "scatter");
  at::Tensor dst = out.contiguous();
  work->add(Step{[stage, dst, root](myrComm_t c, myrStream_t s) {
                   return myrScatter(stage.defined() ? stage.data_ptr() : nullptr, dst.data_ptr(), bytesOf(dst),
                                     myrUint8, root, c, s);
                 },
                 copyBack(out, dst),
                 {stage, dst}},
            {out});
  return submit(work);
}

c10::intrusive_ptr<c10d::Work> BackendMyriad::reduce_scatter(std::vector<at::Tensor>& outputs,
                                                             std::vector<std::vector<at::Tensor>>& inputs,
                                                             const c10d::ReduceScatterOptions& opts) {
  const at::Tensor& out = single(outputs, "reduce_scatter");
  TORCH_CHECK(inputs.size() == 1 && static_cast<int>(inputs[0].size()) == size_,
              "myriad: reduce_scatter needs one list of ", size_, " input tensors");
  for (const at::Tensor& i : inputs[0]) {
    checkTensor(i, "reduce_scatter");
    checkSame(i, out, "reduce_scatter");
  }
  const ReducePlan plan = planReduce(out.scalar_type(), opts.reduceOp);
  auto work = begin(c10d::OpType::REDUCE_SCATTER, "reduce_scatter");
  at::Tensor stage = reduceInput(at::stack(inputs[0]), plan);
  at::Tensor dst = out.contiguous();
  work->add(Step{[stage, dst, plan](myrComm_t c, myrStream_t s) {
                   return myrReduceScatter(stage.data_ptr(), dst.data_ptr(), reduceCount(dst, plan), plan.type, plan.op,
                                           c, s);
                 },
                 copyBack(out, dst),
                 {stage, dst}},
            {out});
  return submit(work);
}

c10::intrusive_ptr<c10d::Work> BackendMyriad::_reduce_scatter_base(at::Tensor& output, at::Tensor& input,
                                                                   const c10d::ReduceScatterOptions& opts) {
  checkTensor(output, "reduce_scatter_tensor");
  checkTensor(input, "reduce_scatter_tensor");
  TORCH_CHECK(output.scalar_type() == input.scalar_type() && input.numel() == output.numel() * size_,
              "myriad: reduce_scatter_tensor needs an input of the output's dtype and ", size_, " times its elements");
  const ReducePlan plan = planReduce(output.scalar_type(), opts.reduceOp);
  auto work = begin(c10d::OpType::_REDUCE_SCATTER_BASE, "reduce_scatter_tensor");
  at::Tensor src = reduceInput(input, plan);
  at::Tensor dst = output.contiguous();
  work->add(Step{[src, dst, plan](myrComm_t c, myrStream_t s) {
                   return myrReduceScatter(src.data_ptr(), dst.data_ptr(), reduceCount(dst, plan), plan.type, plan.op,
                                           c, s);
                 },
                 copyBack(output, dst),
                 {src, dst}},
            {output});
  return submit(work);
}

c10::intrusive_ptr<c10d::Work> BackendMyriad::reduce_scatter_tensor_coalesced(std::vector<at::Tensor>& outputs,
                                                                              std::vector<at::Tensor>& inputs,
                                                                              const c10d::ReduceScatterOptions& opts) {
  TORCH_CHECK(outputs.size() == inputs.size(), "myriad: reduce_scatter_tensor_coalesced: ", outputs.size(),
              " outputs for ", inputs.size(), " inputs");
  auto outer = coalesced_;
  if (!outer) startCoalescing();
  for (size_t i = 0; i < inputs.size(); ++i) _reduce_scatter_base(outputs[i], inputs[i], opts);
  return outer ? c10::intrusive_ptr<c10d::Work>(outer) : endCoalescing();
}

c10::intrusive_ptr<c10d::Work> BackendMyriad::alltoall_base(at::Tensor& output, at::Tensor& input,
                                                            std::vector<int64_t>& outputSplitSizes,
                                                            std::vector<int64_t>& inputSplitSizes,
                                                            const c10d::AllToAllOptions& /*opts*/) {
  checkTensor(output, "alltoall_base");
  checkTensor(input, "alltoall_base");
  TORCH_CHECK(output.scalar_type() == input.scalar_type(), "myriad: alltoall_base: dtypes differ");
  auto work = begin(c10d::OpType::ALLTOALL_BASE, "alltoall_base");
  at::Tensor src = input.contiguous();
  at::Tensor dst = output.contiguous();
  if (outputSplitSizes.empty() && inputSplitSizes.empty()) {
    TORCH_CHECK(src.numel() == dst.numel() && bytesOf(src) % size_ == 0, "myriad: alltoall_base: the input (",
                src.numel(), " elements) and output (", dst.numel(), ") must be equal and divisible by ", size_);
    work->add(Step{[src, dst, n = bytesOf(src) / size_](myrComm_t c, myrStream_t s) {
                     return myrAllToAll(src.data_ptr(), dst.data_ptr(), n, myrUint8, c, s);
                   },
                   copyBack(output, dst),
                   {src, dst}},
              {output});
    return submit(work);
  }
  std::vector<size_t> sc, sd, rc, rd;
  splitBytes(src, inputSplitSizes, size_, sc, sd, "input");
  splitBytes(dst, outputSplitSizes, size_, rc, rd, "output");
  work->add(Step{[src, dst, sc, sd, rc, rd](myrComm_t c, myrStream_t s) {
                   return myrAllToAllv(src.data_ptr(), sc.data(), sd.data(), dst.data_ptr(), rc.data(), rd.data(),
                                       myrUint8, c, s);
                 },
                 copyBack(output, dst),
                 {src, dst}},
            {output});
  return submit(work);
}

c10::intrusive_ptr<c10d::Work> BackendMyriad::alltoall(std::vector<at::Tensor>& outputs,
                                                       std::vector<at::Tensor>& inputs,
                                                       const c10d::AllToAllOptions& /*opts*/) {
  TORCH_CHECK(static_cast<int>(outputs.size()) == size_ && static_cast<int>(inputs.size()) == size_,
              "myriad: alltoall needs ", size_, " input and ", size_, " output tensors");
  std::vector<size_t> sc(size_), sd(size_), rc(size_), rd(size_);
  std::vector<at::Tensor> parts;
  for (int p = 0; p < size_; ++p) {
    checkTensor(inputs[p], "alltoall");
    checkTensor(outputs[p], "alltoall");
    parts.push_back(flatBytes(inputs[p]));
    sc[p] = bytesOf(inputs[p]);
    rc[p] = bytesOf(outputs[p]);
    if (p > 0) {
      sd[p] = sd[p - 1] + sc[p - 1];
      rd[p] = rd[p - 1] + rc[p - 1];
    }
  }
  auto work = begin(c10d::OpType::ALLTOALL, "alltoall");
  at::Tensor src = at::cat(parts);
  at::Tensor stage = at::empty({static_cast<int64_t>(rd[size_ - 1] + rc[size_ - 1])}, src.options());
  std::vector<at::Tensor> outs = outputs;
  work->add(Step{[src, stage, sc, sd, rc, rd](myrComm_t c, myrStream_t s) {
                   return myrAllToAllv(src.data_ptr(), sc.data(), sd.data(), stage.data_ptr(), rc.data(), rd.data(),
                                       myrUint8, c, s);
                 },
                 [outs, stage, rc, rd]() mutable {
                   for (size_t p = 0; p < outs.size(); ++p) {
                     at::Tensor bytes = stage.narrow(0, static_cast<int64_t>(rd[p]), static_cast<int64_t>(rc[p]));
                     outs[p].copy_(bytes.view(outs[p].scalar_type()).view(outs[p].sizes()));
                   }
                 },
                 {src, stage}},
            outs);
  return submit(work);
}

c10::intrusive_ptr<c10d::Work> BackendMyriad::send(std::vector<at::Tensor>& tensors, int dstRank, int /*tag*/) {
  // Tags are not matched: messages between two ranks pair up in call order, as in Myriad.
  const at::Tensor& t = single(tensors, "send");
  checkRoot(dstRank, size_, "send");
  auto work = begin(c10d::OpType::SEND, "send");
  at::Tensor src = t.contiguous();
  work->add(Step{[src, dstRank](myrComm_t c, myrStream_t s) {
                   return myrSend(src.data_ptr(), bytesOf(src), myrUint8, dstRank, c, s);
                 },
                 nullptr,
                 {src},
                 [this, dstRank] { announce(dstRank); }},
            {t});
  return submit(work);
}

c10::intrusive_ptr<c10d::Work> BackendMyriad::recv(std::vector<at::Tensor>& tensors, int srcRank, int /*tag*/) {
  const at::Tensor& t = single(tensors, "recv");
  checkRoot(srcRank, size_, "recv");
  auto work = begin(c10d::OpType::RECV, "recv");
  if (work->name() == "recv") work->setSourceRank(srcRank);
  at::Tensor dst = t.contiguous();
  work->add(Step{[dst, srcRank](myrComm_t c, myrStream_t s) {
                   return myrRecv(dst.data_ptr(), bytesOf(dst), myrUint8, srcRank, c, s);
                 },
                 copyBack(t, dst),
                 {dst},
                 [this, srcRank] { ++received_[srcRank]; }},
            {t});
  return submit(work);
}

c10::intrusive_ptr<c10d::Work> BackendMyriad::recvAnysource(std::vector<at::Tensor>& tensors, int /*tag*/) {
  const at::Tensor& t = single(tensors, "recv from any source");
  TORCH_CHECK(t.device().is_cpu(), "myriad: a receive from any source takes CPU tensors (its sender is found before ",
              "the call is issued, which would block the caller's thread on CUDA tensors)");
  TORCH_CHECK(!coalesced_, "myriad: a receive from any source cannot be coalesced");
  TORCH_CHECK(store_, "myriad: a receive from any source needs the group's store, which a shrunk group lacks");
  auto work = begin(c10d::OpType::RECVANYSOURCE, "recv from any source");
  at::Tensor dst = t.contiguous();
  auto source = std::make_shared<int>(-1);  // found by prepare, in ticket order
  WorkMyriad* self = work.get();
  work->add(Step{[dst, source](myrComm_t c, myrStream_t s) {
                   return myrRecv(dst.data_ptr(), bytesOf(dst), myrUint8, *source, c, s);
                 },
                 copyBack(t, dst),
                 {dst},
                 [this, source, self] {
                   *source = anySource();
                   self->setSourceRank(*source);
                 }},
            {t});
  return submit(work);
}

namespace {
std::string sentKey(int dst, int src) {
  return "myriad_sent/" + std::to_string(dst) + "/" + std::to_string(src);
}
}  // namespace

void BackendMyriad::announce(int dst) {
  if (store_) store_->add(sentKey(dst, rank_), 1);
}

int BackendMyriad::anySource() {
  // Polls the senders' counts, starting after the last sender chosen. A poll reads one key per rank, so a
  // receive from any source costs O(ranks) store reads per poll; the back-off bounds the store's load.
  const auto deadline = std::chrono::steady_clock::now() + timeout_;
  auto pause = std::chrono::microseconds(100);
  while (true) {
    for (int i = 0; i < size_; ++i) {
      const int src = (nextAnySource_ + i) % size_;
      if (src == rank_) continue;  // a rank sends to itself only inside a group, which this receive is not
      if (store_->add(sentKey(rank_, src), 0) > received_[src]) {
        ++received_[src];
        nextAnySource_ = (src + 1) % size_;
        return src;
      }
    }
    {
      std::lock_guard<std::mutex> lock(commMu_);
      TORCH_CHECK(comm_, "the communicator was ", aborted_ ? "aborted" : "shut down");
    }
    TORCH_CHECK(std::chrono::steady_clock::now() < deadline, "no rank sent to this rank within the timeout (",
                timeout_.count(), " ms)");
    std::this_thread::sleep_for(pause);
    pause = std::min(pause * 2, std::chrono::microseconds(20000));
  }
}

c10::intrusive_ptr<c10d::Work> BackendMyriad::barrier(const c10d::BarrierOptions& /*opts*/) {
  auto work = begin(c10d::OpType::BARRIER, "barrier");
  // A host barrier; as with ProcessGroupNCCL's, it also returns only once the CUDA works issued before it
  // have run (their streams are synchronised after it).
  work->add(Step{[](myrComm_t c, myrStream_t s) { return myrBarrier(c, s); }, [this] { streams_.synchronizeAll(); }},
            {});
  return submit(work);
}

}  // namespace torch_myriad
