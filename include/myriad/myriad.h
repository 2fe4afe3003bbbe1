/** @file
 * Myriad: collective communication for training clusters — the C API, the library's only stable ABI.
 * Shaped like NCCL's so that porting is a rename: result codes, data types and reduction operators use
 * NCCL's numeric values. Every call returns a myrResult_t; the text of a communicator's last error is
 * kept on that communicator (myrGetLastError), never in a process-wide buffer. */
#ifndef MYRIAD_MYRIAD_H_
#define MYRIAD_MYRIAD_H_

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/** Major version of this header (and of the library it belongs to). */
#define MYRIAD_MAJOR 0
/** Minor version of this header. */
#define MYRIAD_MINOR 1
/** Patch level of this header. */
#define MYRIAD_PATCH 0
/** Encoded as MAJOR*10000 + MINOR*100 + PATCH, as myrGetVersion reports it. */
#define MYRIAD_VERSION_CODE (MYRIAD_MAJOR * 10000 + MYRIAD_MINOR * 100 + MYRIAD_PATCH)

/** Result codes; numeric values equal NCCL's. Every failure also has a message (myrGetLastError) and is
 *  logged at WARN; docs/troubleshooting.md lists the messages by symptom. */
typedef enum {
  myrSuccess = 0,            /**< The call succeeded (on a stream: it was enqueued). */
  myrUnhandledCudaError = 1, /**< A CUDA runtime or driver call failed, or there is no CUDA driver or device; the
                                  message names the call and CUDA's error. */
  myrSystemError = 2,        /**< An operating-system call failed (socket, shared memory, mmap, verbs); the message
                                  ends with the errno and its text. */
  myrInternalError = 3,      /**< A bug in Myriad: please report it with the message. */
  myrInvalidArgument = 4,    /**< An argument of this call, or a MYRIAD_* variable, is wrong (NULL, out of range,
                                  overlapping buffers, malformed); nothing was started or enqueued. */
  myrInvalidUsage = 5,       /**< The call is not allowed here: in this state (inside a group, init still running),
                                  with what the other ranks do (nranks, message sizes), or not supported yet (graph
                                  capture, device memory between hosts). */
  myrRemoteError = 6,        /**< Another rank failed or exited, or the rendezvous root is gone; the message names the
                                  rank and its host. */
  myrInProgress = 7,         /**< A non-blocking init is still running; poll myrCommGetAsyncError. */
  myrTimeout = 8,            /**< A deadline passed: a peer moved no data for MYRIAD_TIMEOUT_MS (the message names the
                                  rank to blame), or the rendezvous took longer than MYRIAD_INIT_TIMEOUT_MS. */
  myrNumResults = 9          /**< The number of result codes; not a result. */
} myrResult_t;

/** Element types; numeric values equal NCCL's. */
typedef enum {
  myrInt8 = 0,        /**< Signed 8-bit integer. */
  myrChar = 0,        /**< Same as myrInt8. */
  myrUint8 = 1,       /**< Unsigned 8-bit integer. */
  myrInt32 = 2,       /**< Signed 32-bit integer. */
  myrInt = 2,         /**< Same as myrInt32. */
  myrUint32 = 3,      /**< Unsigned 32-bit integer. */
  myrInt64 = 4,       /**< Signed 64-bit integer. */
  myrUint64 = 5,      /**< Unsigned 64-bit integer. */
  myrFloat16 = 6,     /**< IEEE 754 binary16 (half); reduced in float, rounded to nearest even. */
  myrHalf = 6,        /**< Same as myrFloat16. */
  myrFloat32 = 7,     /**< IEEE 754 binary32. */
  myrFloat = 7,       /**< Same as myrFloat32. */
  myrFloat64 = 8,     /**< IEEE 754 binary64. */
  myrDouble = 8,      /**< Same as myrFloat64. */
  myrBfloat16 = 9,    /**< bfloat16 (binary32's exponent, 7 mantissa bits); reduced in float. */
  myrFloat8e4m3 = 10, /**< 8-bit float E4M3 (OCP FP8; overflow gives NaN); reduced in float. */
  myrFloat8e5m2 = 11, /**< 8-bit float E5M2 (OCP FP8; overflow gives infinity); reduced in float. */
  myrNumTypes = 12    /**< The number of data types; not a type. */
} myrDataType_t;

/** Reduction operators; numeric values equal NCCL's. myrAvg divides the sum by the rank count at the end
 *  (integers: truncating division). */
typedef enum {
  myrSum = 0,   /**< Sum. */
  myrProd = 1,  /**< Product. */
  myrMax = 2,   /**< Maximum. */
  myrMin = 3,   /**< Minimum. */
  myrAvg = 4,   /**< Sum divided by the number of ranks. */
  myrNumOps = 5 /**< The number of operators; not an operator. */
} myrRedOp_t;

/** Opaque handle of a communicator. */
typedef struct myrComm* myrComm_t;

/** Opaque handle of a stream.
 *  - Host buffers: NULL, the call blocks until its result is in the receive buffer; a host stream from
 *    myrStreamCreate runs calls asynchronously, in the order they were issued.
 *  - Device buffers (CUDA memory, as NCCL takes them): the caller's `cudaStream_t`, cast to myrStream_t (NULL
 *    is CUDA's default stream). The call only enqueues: it runs after what the stream already holds, and what
 *    is enqueued on the stream after it waits for it. Errors met while it runs stop the communicator
 *    (myrCommGetAsyncError). One call takes host or device buffers, never both. */
typedef struct myrStream* myrStream_t;

/** Size of myrUniqueId in bytes (NCCL's size). */
#define MYR_UNIQUE_ID_BYTES 128
/** Names one communicator: the rendezvous address of its root and a random secret. Produced once by
 *  myrGetUniqueId and handed to every rank out of band (MPI, a file, torch's store). */
typedef struct {
  char internal[MYR_UNIQUE_ID_BYTES]; /**< Opaque: copy all of it, unchanged, to every rank. */
} myrUniqueId;

/** Options of myrCommInitRankConfig. Initialise with MYR_CONFIG_INITIALIZER, then set fields;
 *  a field left at MYR_CONFIG_UNDEF_INT takes its default (from the environment, see docs/environment.md). */
typedef struct {
  size_t size;          /**< sizeof(myrConfig_t), set by the initializer */
  unsigned int magic;   /**< set by the initializer */
  unsigned int version; /**< MYRIAD_VERSION_CODE, set by the initializer */
  int blocking;         /**< 1 (default): init returns when the communicator is ready. 0: init returns
                             myrInProgress at once; poll myrCommGetAsyncError until it is myrSuccess. */
  int timeoutMs;        /**< milliseconds a call waits for ranks that are alive but late (not in the call)
                             before myrTimeout (default MYRIAD_TIMEOUT_MS, 1800000); dead and stuck ranks
                             are caught sooner (docs/failures.md) */
  int initTimeoutMs;    /**< deadline of the whole rendezvous (default MYRIAD_INIT_TIMEOUT_MS, 60000) */
} myrConfig_t;

/** A myrConfig_t field holding this value takes its default (INT_MIN, as NCCL_CONFIG_UNDEF_INT). */
#define MYR_CONFIG_UNDEF_INT (-2147483647 - 1)
/** Marks a myrConfig_t set up by MYR_CONFIG_INITIALIZER ("myrc"); a config without it is myrInvalidArgument. */
#define MYR_CONFIG_MAGIC 0x6d797263u
/** Initial value of a myrConfig_t: size, magic and version filled in, every option MYR_CONFIG_UNDEF_INT. */
#define MYR_CONFIG_INITIALIZER                                                                              \
  {                                                                                                         \
    sizeof(myrConfig_t), MYR_CONFIG_MAGIC, MYRIAD_VERSION_CODE, MYR_CONFIG_UNDEF_INT, MYR_CONFIG_UNDEF_INT, \
        MYR_CONFIG_UNDEF_INT                                                                                \
  }

/** Library version as MYRIAD_VERSION_CODE. */
myrResult_t myrGetVersion(int* version);

/** A new unique id: opens this process's rendezvous listener (the id holds its address and a 128-bit
 *  secret). Call it on one rank (the root), which then also joins the communicator.
 *  With MYRIAD_COMM_ID=host:port set, every rank calls it instead and gets the same id, derived from the
 *  variable (and MYRIAD_COMM_SECRET) without starting anything; rank 0 listens there in myrCommInitRank. */
myrResult_t myrGetUniqueId(myrUniqueId* uniqueId);

/** Which launcher started this process, and as which rank: reads the launchers' own variables, the first
 *  launcher whose rank or size variable is set deciding, in the order Open MPI (OMPI_COMM_WORLD_RANK/SIZE/
 *  LOCAL_RANK), PMI (PMI_RANK/SIZE, MPI_LOCALRANKID or PMI_LOCAL_RANK: MPICH, Intel MPI, srun --mpi=pmi2),
 *  Slurm (SLURM_PROCID/NTASKS/LOCALID) and torchrun (RANK/WORLD_SIZE/LOCAL_RANK). Without any of them the
 *  process is rank 0 of 1, launcher "none". Each output may be NULL: *rank, *nranks and *localRank (0 when
 *  the launcher does not say) receive the numbers, and `launcher` (at most `len` bytes including the final
 *  NUL) the launcher's name: "ompi", "pmi", "slurm", "torchrun" or "none". Starts nothing and joins
 *  nothing; the ranks still need a common unique id, e.g. each calling myrGetUniqueId with MYRIAD_COMM_ID
 *  set. A set but malformed value (not a number, rank not below size, one of rank and size missing) is
 *  myrInvalidArgument, and myrGetLastError(NULL) names the variable; the outputs are then left unchanged. */
myrResult_t myrLaunchInfo(int* rank, int* nranks, int* localRank, char* launcher, size_t len);

/** Joins the communicator named by commId as `rank` of `nranks`; collective over all ranks. */
myrResult_t myrCommInitRank(myrComm_t* comm, int nranks, myrUniqueId commId, int rank);

/** As myrCommInitRank, with options. */
myrResult_t myrCommInitRankConfig(myrComm_t* comm, int nranks, myrUniqueId commId, int rank, myrConfig_t* config);

/** Waits for the communicator's outstanding calls, then frees it. */
myrResult_t myrCommDestroy(myrComm_t comm);

/** Stops every outstanding call of the communicator (they fail), then frees it; returns promptly from any
 *  state, including a communicator whose peers are dead. A call blocked on another thread (a NULL stream)
 *  returns an error whose text says the communicator was aborted; as the handle is gone by then, that thread
 *  reads the text with myrGetLastError(NULL). */
myrResult_t myrCommAbort(myrComm_t comm);

/** The communicator's first asynchronous error (a dead peer, a timeout), myrInProgress while a
 *  non-blocking init runs, or myrSuccess. */
myrResult_t myrCommGetAsyncError(myrComm_t comm, myrResult_t* asyncError);

/** The number of ranks of the communicator, in *count. */
myrResult_t myrCommCount(const myrComm_t comm, int* count);
/** This process's rank in the communicator, in *rank. */
myrResult_t myrCommUserRank(const myrComm_t comm, int* rank);

/** Registers [buff, buff + size) with the communicator for repeated use and returns a handle for
 *  myrCommDeregister. Calls whose buffers lie inside a registered range skip per-call set-up (over RDMA:
 *  the memory is registered with the NIC once, here, instead of on every call; an error such as the
 *  locked-memory limit is reported here). Ranges may overlap; registering is local, not collective. The
 *  memory must stay allocated until it is deregistered. Not allowed between myrGroupStart and myrGroupEnd. */
myrResult_t myrCommRegister(const myrComm_t comm, void* buff, size_t size, void** handle);

/** Ends a registration. Waits for the communicator's calls queued on streams first; when it returns, no
 *  resource refers to the memory any more and it may be freed, or reallocated and passed to Myriad again. */
myrResult_t myrCommDeregister(const myrComm_t comm, void* handle);

/** A short description of a result code; never NULL. */
const char* myrGetErrorString(myrResult_t result);

/** The message of the last error on this communicator (e.g. "tcp: recv from rank 3 (node-b pid 411)
 *  failed: connection closed"); "" when there was none. Valid until the next call on comm. With NULL: the
 *  last error on this thread of a call without a communicator, or of a call whose communicator
 *  myrCommAbort freed while it ran. */
const char* myrGetLastError(myrComm_t comm);

/** Debugging: a text table of this rank's network paths (per peer and path: source port, state, bytes,
 *  throughput, latency p50/p99, re-paths; see docs/design/multipath.md), as of their last control round.
 *  Writes at most *len bytes including the final NUL and sets *len to the size the whole text needs. */
myrResult_t myrDebugNetPaths(myrComm_t comm, char* buf, size_t* len);

/** Debugging: what really ran. One line per peer this rank has a connection to, naming its transport and what
 *  carried the data so far ("peer 1: shm: received 0 B through the FIFO and 4194304 B in 2 single-copy reads
 *  (process_vm_readv); ...", "peer 2: tcp: 10.1.1.2:41000 -> 10.2.1.2:5000", "peer 3: tcp multipath to ...:
 *  4 paths, bytes acknowledged by source port: ..."), "peer 4: not connected" for the others, then one line on
 *  the last call the flight record holds ("last call: allreduce via allreduce.tree", or "last call: none").
 *  Same buffer convention as myrDebugNetPaths. Call it between calls, from the thread that makes them. */
myrResult_t myrDebugPeers(myrComm_t comm, char* buf, size_t* len);

/** Debugging: writes this rank's flight record of comm to the file `path` as JSON — the last calls it
 *  executed (MYRIAD_FLIGHT_RECORD of them: op, count, type, algorithm, peers and bytes planned per peer,
 *  start and end times, outcome), the call it is in now and whom that call waits on, and the
 *  communicator's first error. Safe from any thread, also while a call on comm runs or after comm failed;
 *  `myriad-trace` reads the dumps of all ranks and names the rank the others wait on (docs/failures.md).
 *  MYRIAD_DUMP_ON_ERROR writes the same file when a communicator fails. */
myrResult_t myrCommDump(myrComm_t comm, const char* path);

/** Device memory for collectives: `size` bytes on the process's device (CUDA: a cuMem allocation other
 *  processes of the host can map, or cudaMalloc memory where the driver lacks VMM), like ncclMemAlloc. Any
 *  device memory works as a buffer; this is what Myriad shares most cheaply. Fails with a message saying why
 *  where there is no device (a machine without a GPU or driver). */
myrResult_t myrMemAlloc(void** ptr, size_t size);
/** Frees memory of myrMemAlloc (NULL is a no-op). No call using it may still be enqueued. */
myrResult_t myrMemFree(void* ptr);

/** Host streams: an ordered, asynchronous queue of calls on host memory. */
myrResult_t myrStreamCreate(myrStream_t* stream);
/** Waits for every call issued on the stream; returns the first error any of them met, once. */
myrResult_t myrStreamSynchronize(myrStream_t stream);
/** Runs the calls still queued on the host stream, then frees it. Their errors are not reported: call
 *  myrStreamSynchronize first to see them. */
myrResult_t myrStreamDestroy(myrStream_t stream);

/** recvbuff[i] = op over all ranks of sendbuff[i], for i < count, on every rank. sendbuff == recvbuff
 *  is in place. */
myrResult_t myrAllReduce(const void* sendbuff, void* recvbuff, size_t count, myrDataType_t datatype, myrRedOp_t op,
                         myrComm_t comm, myrStream_t stream);

/** Copies root's sendbuff (count elements) into every rank's recvbuff. sendbuff is read on the root only;
 *  sendbuff == recvbuff on the root is in place. */
myrResult_t myrBroadcast(const void* sendbuff, void* recvbuff, size_t count, myrDataType_t datatype, int root,
                         myrComm_t comm, myrStream_t stream);

/** Like myrAllReduce, but only the root's recvbuff receives the result (other ranks may pass NULL). */
myrResult_t myrReduce(const void* sendbuff, void* recvbuff, size_t count, myrDataType_t datatype, myrRedOp_t op,
                      int root, myrComm_t comm, myrStream_t stream);

/** recvbuff (nranks * sendcount elements) receives rank r's sendbuff at offset r * sendcount, on every rank.
 *  In place when sendbuff == recvbuff + rank * sendcount. */
myrResult_t myrAllGather(const void* sendbuff, void* recvbuff, size_t sendcount, myrDataType_t datatype, myrComm_t comm,
                         myrStream_t stream);

/** Reduces sendbuff (nranks * recvcount elements) over all ranks; rank r receives block r (recvcount
 *  elements). In place when recvbuff == sendbuff + rank * recvcount. */
myrResult_t myrReduceScatter(const void* sendbuff, void* recvbuff, size_t recvcount, myrDataType_t datatype,
                             myrRedOp_t op, myrComm_t comm, myrStream_t stream);

/** Block p of sendbuff (count elements at p * count) goes to rank p, landing at r * count in its recvbuff,
 *  where r is the sender. sendbuff == recvbuff is allowed (in place); any other overlap is not. */
myrResult_t myrAllToAll(const void* sendbuff, void* recvbuff, size_t count, myrDataType_t datatype, myrComm_t comm,
                        myrStream_t stream);

/** All-to-all with per-peer counts and displacements, in elements: sendcounts[p] elements from
 *  sendbuff + sdispls[p] go to rank p, which receives them at rdispls[r] (recvcounts[r] elements, which must
 *  equal what r sends it). The arrays have nranks entries and are copied before the call returns. */
myrResult_t myrAllToAllv(const void* sendbuff, const size_t sendcounts[], const size_t sdispls[], void* recvbuff,
                         const size_t recvcounts[], const size_t rdispls[], myrDataType_t datatype, myrComm_t comm,
                         myrStream_t stream);

/** The root's recvbuff (nranks * count elements) receives rank r's sendbuff at r * count. recvbuff is used
 *  on the root only; in place when sendbuff == recvbuff + root * count on the root. */
myrResult_t myrGather(const void* sendbuff, void* recvbuff, size_t count, myrDataType_t datatype, int root,
                      myrComm_t comm, myrStream_t stream);

/** Rank r's recvbuff receives block r (count elements at r * count) of the root's sendbuff. sendbuff is
 *  read on the root only; in place when recvbuff == sendbuff + root * count on the root. */
myrResult_t myrScatter(const void* sendbuff, void* recvbuff, size_t count, myrDataType_t datatype, int root,
                       myrComm_t comm, myrStream_t stream);

/** Point-to-point: count elements to / from `peer`. Messages between two ranks match in call order. Outside
 *  a group each call completes on its own (so two ranks that both send first wait for each other's receive:
 *  put such patterns in a group). A rank may send to itself only inside a group that also receives. */
myrResult_t myrSend(const void* sendbuff, size_t count, myrDataType_t datatype, int peer, myrComm_t comm,
                    myrStream_t stream);
/** Point-to-point: receives count elements from `peer` into recvbuff; the counterpart of myrSend, with the same
 *  matching and grouping rules. */
myrResult_t myrRecv(void* recvbuff, size_t count, myrDataType_t datatype, int peer, myrComm_t comm, myrStream_t stream);

/** Returns (or, on a stream, completes) once every rank has entered the barrier. */
myrResult_t myrBarrier(myrComm_t comm, myrStream_t stream);

/** Groups: calls between myrGroupStart and the matching myrGroupEnd (on this thread; groups nest) are
 *  checked and queued, then issued together by the outermost myrGroupEnd: the collectives in call order,
 *  then all point-to-point calls of a communicator as one operation, so any mix of sends and receives
 *  between any peers completes. An argument error is returned by the call itself and nothing is queued
 *  for it; an error while running is returned by myrGroupEnd (or by the stream). */
myrResult_t myrGroupStart(void);
/** Ends the group of the matching myrGroupStart; the outermost one issues the queued calls (see
 *  myrGroupStart) and returns an error met while running them (on a stream, the stream reports it). */
myrResult_t myrGroupEnd(void);

/** Colour that leaves a rank out of every new communicator of a split (*newcomm becomes NULL). */
#define MYR_SPLIT_NOCOLOR (-1)

/** Collective over `comm`: ranks with the same colour form a new communicator, ranked by key (ties by rank
 *  in comm). config NULL inherits comm's settings. */
myrResult_t myrCommSplit(myrComm_t comm, int color, int key, myrComm_t* newcomm, myrConfig_t* config);

/** myrCommShrink flag: the parent has no calls in flight that will not finish; calls still queued on streams
 *  are waited for first (as myrCommSplit does). */
#define MYR_SHRINK_DEFAULT 0x00
/** myrCommShrink flag: first abort the calls in flight on the parent (they fail at once), as after a peer
 *  died. The parent stays allocated and aborted: destroy it (myrCommDestroy or myrCommAbort) when done. */
#define MYR_SHRINK_ABORT 0x01

/** A new communicator of comm's ranks but the `excludeRanksCount` ranks listed in `excludeRanksList`, numbered
 *  in comm's rank order (NCCL 2.27's ncclCommShrink). Every rank not excluded calls it with the same list; the
 *  excluded ranks must not call it and may be dead: nothing is exchanged with them, and comm may be failed or
 *  aborted. The survivors meet through comm's rendezvous store; if that store is gone (its host process was
 *  among the dead) the call fails with myrRemoteError and a new communicator needs myrCommInitRank with a new
 *  unique id. A survivor that passed another list fails the call on every survivor (myrInvalidUsage); one
 *  that never calls it fails it after config's initTimeoutMs. config NULL inherits comm's settings.
 *  shrinkFlags: MYR_SHRINK_DEFAULT or MYR_SHRINK_ABORT. Refused without effect (myrInvalidArgument) when
 *  newcomm is NULL, the list is NULL with a positive count, a rank is out of range or listed twice, the list
 *  names this rank or every rank, or the flags are unknown; inside a group, myrInvalidUsage. */
myrResult_t myrCommShrink(myrComm_t comm, int* excludeRanksList, int excludeRanksCount, myrComm_t* newcomm,
                          myrConfig_t* config, int shrinkFlags);

#ifdef __cplusplus
}
#endif

#endif /* MYRIAD_MYRIAD_H_ */
