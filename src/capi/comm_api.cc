// C API: versions, unique ids, communicator life cycle and error reporting.
#include <chrono>
#include <cstring>
#include <thread>

#include "base/log.h"
#include "capi/handles.h"
#include "capi/internal.h"
#include "rendezvous/comm_id.h"
#include "rendezvous/tcp_store.h"
#include "rendezvous/unique_id.h"
#include "transports/cuda_ipc/ipc_channel.h"
#include "transports/factory.h"

namespace myriad::capi {
namespace {

thread_local std::string tLastError;  // errors of calls that have no communicator (see myrGetLastError)

Result<Config> configFor(const myrConfig_t* user) {
  MYR_ASSIGN_OR_RETURN(Config c, Config::fromEnv());
  configureLogging(c);
  return applyUserConfig(std::move(c), user);
}

Status runInit(myrComm* c, const Secret& secret, const std::string& tag, std::shared_ptr<Store> store,
               const Config& config) {
  CommSetup setup;
  setup.rank = c->rank;
  setup.nranks = c->nranks;
  setup.store = std::move(store);
  setup.secret = secret;
  setup.commTag = tag;
  setup.config = config;
  setup.cancel = &c->cancelInit;
  setup.openTransports = openTransports;
  setup.deviceChannels = ipcChannelOpener;
  auto comm = Comm::create(std::move(setup));
  if (!comm.isOk()) return comm.takeStatus();
  c->impl = comm.take();
  return Status::ok();
}

}  // namespace

Result<Config> applyUserConfig(Config c, const myrConfig_t* user) {
  if (!user) return c;
  if (user->magic != MYR_CONFIG_MAGIC || user->size < sizeof(myrConfig_t))
    return invalidArgument("config was not initialised with MYR_CONFIG_INITIALIZER");
  if (user->timeoutMs != MYR_CONFIG_UNDEF_INT) {
    if (user->timeoutMs <= 0) return invalidArgument("config.timeoutMs must be positive");
    c.timeoutMs = user->timeoutMs;
  }
  if (user->initTimeoutMs != MYR_CONFIG_UNDEF_INT) {
    if (user->initTimeoutMs <= 0) return invalidArgument("config.initTimeoutMs must be positive");
    c.initTimeoutMs = user->initTimeoutMs;
  }
  if (user->blocking != MYR_CONFIG_UNDEF_INT && user->blocking != 0 && user->blocking != 1)
    return invalidArgument("config.blocking must be 0 or 1");
  return c;
}

Status checkRanks(myrComm_t* comm, int nranks, int rank) {
  if (!comm) return invalidArgument("comm (the output pointer) is NULL");
  if (nranks <= 0) return invalidArgument("nranks must be positive, got " + std::to_string(nranks));
  if (rank < 0 || rank >= nranks)
    return invalidArgument("rank " + std::to_string(rank) + " is out of range [0, " + std::to_string(nranks) + ")");
  return Status::ok();
}

Status initComm(myrComm_t* out, int nranks, int rank, const Secret& secret, const std::string& tag,
                std::shared_ptr<Store> store, const Config& config, bool blocking) {
  auto c = std::make_unique<myrComm>();
  c->rank = rank;
  c->nranks = nranks;
  if (blocking) {
    MYR_TRY(runInit(c.get(), secret, tag, std::move(store), config));
    c->initResult = myrSuccess;
    *out = c.release();
    return Status::ok();
  }
  myrComm* raw = c.get();
  raw->initThread = std::thread([raw, secret, tag, store, config] {
    Status s = runInit(raw, secret, tag, store, config);
    if (!s.isOk()) {
      std::lock_guard<std::mutex> lock(raw->errorMu);
      raw->lastError = s.message();
    }
    raw->initResult = s.toC();
  });
  *out = c.release();
  return Status(Code::kInProgress, "initialisation in progress");
}

namespace {

Status storeFor(const UniqueId& id, const Config& config, std::shared_ptr<Store>* store) {
  if (id.kind == IdKind::kFile)
    *store = std::make_shared<FileStore>(id.fileDir);
  else
    *store = std::make_shared<TcpStore>(id.tcpRoot, id.secret, config.initTimeoutMs);
  return Status::ok();
}

Status commInitRank(myrComm_t* comm, int nranks, const myrUniqueId& rawId, int rank, myrConfig_t* userConfig) {
  if (comm) *comm = nullptr;
  MYR_TRY(checkRanks(comm, nranks, rank));
  MYR_ASSIGN_OR_RETURN(Config config, configFor(userConfig));
  MYR_ASSIGN_OR_RETURN(UniqueId id, UniqueId::decode(rawId));
  std::shared_ptr<Store> store;
  MYR_TRY(storeFor(id, config, &store));
  if (id.rootAtInit) MYR_TRY(prepareRootAtInit(rank, &id, &store));
  bool blocking = !userConfig || userConfig->blocking != 0;
  return initComm(comm, nranks, rank, id.secret, id.tag(), std::move(store), config, blocking);
}

Status getUniqueId(myrUniqueId* out) {
  if (!out) return invalidArgument("uniqueId is NULL");
  MYR_ASSIGN_OR_RETURN(Config config, configFor(nullptr));
  if (!config.commId.empty()) {  // every rank calls this and gets the same id; rank 0 listens at init
    MYR_ASSIGN_OR_RETURN(UniqueId derived, uniqueIdFromCommId(config.commId, config.commSecret));
    *out = derived.encode();
    return Status::ok();
  }
  UniqueId id;
  id.kind = IdKind::kTcp;
  id.secret = randomSecret();
  MYR_ASSIGN_OR_RETURN(id.tcpRoot, chooseListenAddress(config.socketIfname));
  MYR_TRY(startTcpStoreServer(&id.tcpRoot, id.secret));
  *out = id.encode();
  return Status::ok();
}

// Joins a non-blocking init, then frees; with abort, cancels the rendezvous and stops outstanding calls.
Status destroy(myrComm_t comm, bool abort) {
  if (!comm) return invalidArgument("comm is NULL");
  if (abort) {
    comm->aborting = true;
    comm->cancelInit = true;
    if (comm->impl) comm->impl->abort();
  }
  if (comm->initThread.joinable()) comm->initThread.join();
  // Calls blocked on other threads fail at once after the abort; they still read the handle until they return.
  while (abort && comm->callsRunning.load(std::memory_order_acquire) > 0)
    std::this_thread::sleep_for(std::chrono::microseconds(100));
  delete comm;  // ~Comm waits for calls still queued on streams; after an abort they fail at once
  return Status::ok();
}

}  // namespace

myrResult_t finish(myrComm_t comm, const Status& s, const char* function) {
  if (s.isOk()) return myrSuccess;
  if (s.code() == Code::kInProgress) return myrInProgress;
  int rank = comm ? comm->rank : -1;
  MYR_LOG(kWarn, kInit, rank, std::string(function) + ": " + s.toString());
  if (comm) {
    std::lock_guard<std::mutex> lock(comm->errorMu);
    comm->lastError = s.message();
  }
  // A call that myrCommAbort stopped from another thread returns after the handle is freed: its text stays
  // readable on its own thread (myrGetLastError(NULL)).
  if (!comm || comm->aborting) tLastError = s.message();
  return s.toC();
}

Result<Comm*> ready(myrComm_t comm) {
  if (!comm) return invalidArgument("comm is NULL");
  int init = comm->initResult.load();
  if (init == myrInProgress)
    return invalidUsage("communicator initialisation is still in progress; poll myrCommGetAsyncError");
  if (init != myrSuccess || !comm->impl) return invalidUsage("communicator initialisation failed");
  return comm->impl.get();
}

const char* lastError(myrComm_t comm) {
  if (!comm) return tLastError.c_str();
  std::lock_guard<std::mutex> lock(comm->errorMu);
  // An asynchronous failure (on a stream, or of a peer) counts as this communicator's last error too.
  if (comm->lastError.empty() && comm->impl && !comm->impl->usable().isOk())
    comm->lastError = comm->impl->usable().message();
  return comm->lastError.c_str();
}

}  // namespace myriad::capi

namespace myriad {

myrResult_t commInitFromStore(myrComm_t* comm, int nranks, int rank, std::shared_ptr<Store> store,
                              const Config& config) {
  if (comm) *comm = nullptr;
  Status s = capi::checkRanks(comm, nranks, rank);
  // The ranks share no id here, so rank 0 draws the secret and hands it over through the store.
  UniqueId id;
  if (s.isOk() && rank == 0) {
    id.secret = randomSecret();
    s = store->set("comm.secret", Bytes(id.secret.begin(), id.secret.end()));
  } else if (s.isOk()) {
    auto got = store->get("comm.secret", config.initTimeoutMs, nullptr);
    if (!got.isOk())
      s = got.takeStatus();
    else if (got.value().size() != id.secret.size())
      s = invalidArgument("store holds a malformed secret");
    else
      std::copy(got.value().begin(), got.value().end(), id.secret.begin());
  }
  if (s.isOk()) s = capi::initComm(comm, nranks, rank, id.secret, id.tag(), std::move(store), config, true);
  return capi::finish(nullptr, s, "commInitFromStore");
}

myrResult_t makeFileStoreId(const std::string& dir, myrUniqueId* out) {
  UniqueId id;
  id.kind = IdKind::kFile;
  id.secret = randomSecret();
  id.fileDir = dir;
  Status s = dir.empty() || dir.size() > 100 ? invalidArgument("file store directory must be 1-100 bytes") : Status();
  if (s.isOk() && out) *out = id.encode();
  return capi::finish(nullptr, s, "makeFileStoreId");
}

}  // namespace myriad

using myriad::capi::finish;

extern "C" {

myrResult_t myrGetVersion(int* version) {
  if (!version) return finish(nullptr, myriad::invalidArgument("version is NULL"), __func__);
  *version = MYRIAD_VERSION_CODE;
  return myrSuccess;
}

myrResult_t myrGetUniqueId(myrUniqueId* uniqueId) {
  return finish(nullptr, myriad::capi::getUniqueId(uniqueId), __func__);
}

myrResult_t myrCommInitRank(myrComm_t* comm, int nranks, myrUniqueId commId, int rank) {
  return finish(nullptr, myriad::capi::commInitRank(comm, nranks, commId, rank, nullptr), __func__);
}

myrResult_t myrCommInitRankConfig(myrComm_t* comm, int nranks, myrUniqueId commId, int rank, myrConfig_t* config) {
  return finish(nullptr, myriad::capi::commInitRank(comm, nranks, commId, rank, config), __func__);
}

myrResult_t myrCommDestroy(myrComm_t comm) {
  return finish(nullptr, myriad::capi::destroy(comm, false), __func__);
}

myrResult_t myrCommAbort(myrComm_t comm) {
  return finish(nullptr, myriad::capi::destroy(comm, true), __func__);
}

myrResult_t myrCommGetAsyncError(myrComm_t comm, myrResult_t* asyncError) {
  if (!comm || !asyncError) return finish(comm, myriad::invalidArgument("comm or asyncError is NULL"), __func__);
  int init = comm->initResult.load();
  if (init != myrSuccess) return *asyncError = static_cast<myrResult_t>(init), myrSuccess;
  myriad::Status first = comm->impl->usable();
  *asyncError = first.toC();
  if (!first.isOk()) {
    std::lock_guard<std::mutex> lock(comm->errorMu);
    comm->lastError = first.message();  // so that myrGetLastError explains the asynchronous error
  }
  return myrSuccess;
}

myrResult_t myrCommCount(const myrComm_t comm, int* count) {
  if (!comm || !count) return finish(comm, myriad::invalidArgument("comm or count is NULL"), __func__);
  *count = comm->nranks;
  return myrSuccess;
}

myrResult_t myrCommUserRank(const myrComm_t comm, int* rank) {
  if (!comm || !rank) return finish(comm, myriad::invalidArgument("comm or rank is NULL"), __func__);
  *rank = comm->rank;
  return myrSuccess;
}

const char* myrGetErrorString(myrResult_t result) {
  switch (result) {
    case myrSuccess: return "no error";
    case myrUnhandledCudaError: return "unhandled CUDA error";
    case myrSystemError: return "unhandled system error (network, shared memory, ...)";
    case myrInternalError: return "internal error (a bug in Myriad)";
    case myrInvalidArgument: return "invalid argument";
    case myrInvalidUsage: return "invalid usage";
    case myrRemoteError: return "remote process exited or there was a network error";
    case myrInProgress: return "operation in progress";
    case myrTimeout: return "a peer was silent past the deadline";
    default: return "unknown result code";
  }
}

const char* myrGetLastError(myrComm_t comm) {
  return myriad::capi::lastError(comm);
}

}  // extern "C"
