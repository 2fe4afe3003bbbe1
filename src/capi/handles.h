// The C handles behind myrComm_t and myrStream_t, and the one conversion every exported function ends
// with: Status -> myrResult_t, logged once, its text stored on the communicator (or, for calls without
// one, on the calling thread) for myrGetLastError.
#pragma once

#include <atomic>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include "core/comm.h"
#include "core/host_stream.h"
#include "myriad/myriad.h"

struct myrComm {
  std::unique_ptr<myriad::Comm> impl;  // set once init succeeded
  std::thread initThread;              // non-blocking init
  std::atomic<int> initResult{myrInProgress};
  std::atomic<bool> cancelInit{false};
  std::atomic<bool> aborting{false};  // myrCommAbort has begun: calls still running record their error per thread
  std::atomic<int> callsRunning{0};   // calls inside the library on this handle (CallScope)
  int rank = -1;
  int nranks = 0;
  int shrinks = 0;  // myrCommShrink calls on this handle that passed their checks: names each one's store keys
  std::mutex errorMu;
  std::string lastError;
};

struct myrStream {
  myriad::HostStream host;
};

namespace myriad::capi {

// Counts a call on the handle while it runs, so that myrCommAbort on another thread frees the handle only once
// the calls it stopped have left (their finish() included), never under them.
class CallScope {
 public:
  explicit CallScope(myrComm_t comm) : comm_(comm) {
    if (comm_) comm_->callsRunning.fetch_add(1, std::memory_order_acq_rel);
  }
  ~CallScope() {
    if (comm_) comm_->callsRunning.fetch_sub(1, std::memory_order_acq_rel);
  }
  CallScope(const CallScope&) = delete;
  CallScope& operator=(const CallScope&) = delete;

 private:
  myrComm_t comm_;
};

// Converts, logs and records; returns the C code.
myrResult_t finish(myrComm_t comm, const Status& s, const char* function);
// The communicator when it is ready for calls, else why not.
Result<Comm*> ready(myrComm_t comm);
const char* lastError(myrComm_t comm);
// `base` with the fields the user set in `config` (NULL: none); InvalidArgument for bad values.
Result<Config> applyUserConfig(Config base, const myrConfig_t* config);
// Blocking: initialises now. Non-blocking: returns InProgress at once and initialises on a thread.
Status initComm(myrComm_t* out, int nranks, int rank, const Secret& secret, const std::string& tag,
                std::shared_ptr<Store> store, const Config& config, bool blocking);
Status checkRanks(myrComm_t* comm, int nranks, int rank);

// What myrCommSplit and myrCommShrink share (capi/child_comm.cc). The checks before anything happens: newcomm
// (then set to NULL), the parent ready, no group open; returns the parent.
Result<Comm*> startChild(myrComm_t comm, myrComm_t* newcomm, const char* function);
// Joins a new communicator of `nranks` ranks as `newRank` through the parent's store under the keys
// `prefix`*, with the parent's secret and tag plus `tagSuffix` (both unique to this child among the parent's).
// `endWithParent` (a split): a failure of the parent while the child bootstraps, blocking, ends its waits.
Status initChild(Comm& parent, const std::string& prefix, const std::string& tagSuffix, int nranks, int newRank,
                 const Config& config, const myrConfig_t* userConfig, myrComm_t* newcomm, bool endWithParent);

}  // namespace myriad::capi
