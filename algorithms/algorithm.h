// The Algorithm -> Task seam. An algorithm says whether it can run a call (and why not), and plans it into
// a Task: chunking, peers and buffers decided once; the Task then only posts, polls and reduces.
#pragma once

#include <cstddef>
#include <memory>

#include "core/comm.h"
#include "exec/task.h"
#include "myriad/myriad.h"

namespace myriad {

enum class CollKind { kAllReduce };

struct CollArgs {
  CollKind kind = CollKind::kAllReduce;
  const void* sendbuff = nullptr;
  void* recvbuff = nullptr;
  size_t count = 0;
  myrDataType_t dtype = myrFloat32;
  myrRedOp_t op = myrSum;
  int root = 0;
};

class Algorithm {
 public:
  virtual ~Algorithm() = default;
  // The registry name, e.g. "allreduce.ring": the same spelling in logs, MYRIAD_ALGO, benchmarks and docs.
  virtual const char* name() const = 0;
  virtual CollKind kind() const = 0;
  // Ok, or NotSupported with the reason.
  virtual Status supports(const CollArgs& args, const Comm& comm) const = 0;
  virtual Result<std::unique_ptr<Task>> plan(const CollArgs& args, Comm& comm) const = 0;
};

}  // namespace myriad
