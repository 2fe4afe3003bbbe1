// Schedule: most algorithms are a few dozen lines that list steps — send, receive, reduce, copy — with the
// steps each one waits for; ScheduleTask then runs them as a Task that never blocks. Messages to one peer
// leave in the order their steps were added, and messages from one peer are matched in the order their
// receives were added, so two ranks that add their steps for each other in the same logical order always
// agree (whatever the dependencies let run first). Buffers are the caller's or scratch from
// reserveScratch(); reusing a buffer safely is expressed with dependencies.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <initializer_list>
#include <memory>
#include <vector>

#include "core/comm.h"
#include "exec/task.h"

namespace myriad {

class Schedule {
 public:
  using Step = int32_t;
  using Deps = std::vector<Step>;

  explicit Schedule(Comm& comm) : comm_(comm) {}

  Step send(int peer, const void* buf, size_t bytes, const Deps& deps = {});
  Step recv(int peer, void* buf, size_t bytes, const Deps& deps = {});
  // dst[i] = a[i] op b[i] for i < count (dst may alias a or b)
  Step reduce(void* dst, const void* a, const void* b, size_t count, myrDataType_t dtype, myrRedOp_t op,
              const Deps& deps = {});
  Step copy(void* dst, const void* src, size_t bytes, const Deps& deps = {});
  // buf[i] /= n: the end of an average
  Step scaleAvg(void* buf, size_t count, myrDataType_t dtype, int n, const Deps& deps = {});
  // A receive reduced into dst on arrival: dst[i] = incoming[i] op b[i] for i < count (dst may alias b).
  // Where the connection combines on arrival (shm) it reduces straight out of its own buffer; elsewhere the
  // message lands in `staging` (count elements, the caller's scratch) and is reduced from there. Only for a
  // reduce that needs nothing but the message: the destination may be written while the message arrives.
  Step recvReduce(int peer, void* dst, const void* b, void* staging, size_t count, myrDataType_t dtype, myrRedOp_t op,
                  const Deps& deps = {});
  // A step that does nothing but wait for `deps`: a join point that keeps dependency lists short.
  Step join(const Deps& deps);

  // Pre-faulted scratch memory of the communicator, valid while this schedule runs. Call at most once.
  uint8_t* reserveScratch(size_t bytes);

  Comm& comm() { return comm_; }
  size_t size() const { return steps_.size(); }
  // The Task that runs the steps; opens the connections the steps need.
  Result<std::unique_ptr<Task>> build(const char* algorithm);

  enum class Kind : uint8_t { kSend, kRecv, kRecvReduce, kReduce, kCopy, kScale, kJoin };
  struct StepInfo {
    Kind kind;
    int peer = -1;
    void* dst = nullptr;
    const void* a = nullptr;
    const void* b = nullptr;
    void* staging = nullptr;  // recvReduce on a connection that does not combine
    size_t n = 0;             // bytes for send/recv/recvReduce/copy, elements for reduce/scale
    myrDataType_t dtype = myrFloat32;
    myrRedOp_t op = myrSum;
    int divisor = 1;
    int32_t firstDep = 0, numDeps = 0;  // into deps_
  };

 private:
  friend class ScheduleTask;
  Step add(StepInfo s, const Deps& deps);

  Comm& comm_;
  std::vector<StepInfo> steps_;
  std::vector<Step> deps_;
  bool scratchTaken_ = false;
};

// A Task in two stages, for algorithms whose plan depends on data the ranks exchange first (all-to-allv
// counts): `first` runs; once it is done, `next` plans the second stage, which then runs.
std::unique_ptr<Task> staged(std::unique_ptr<Task> first, std::function<Result<std::unique_ptr<Task>>()> next);

}  // namespace myriad
