// The Transport -> Connection seam. A Transport reaches peers of one kind; a Connection is one link to one
// peer. Set-up may block (with a deadline); the data path only posts and polls: postSend/postRecv queue a
// Request, poll() advances every queued Request without blocking and marks finished ones done. Messages on
// a connection are matched in order; each carries a tag and its size, and a mismatch is an error that
// names the peer (it means the ranks called different collectives or counts). A receive may ask to be
// combined on arrival (Request::combine): transports that can (combinesOnReceive) reduce the incoming bytes
// into the destination while they copy them, saving the pass through a staging buffer.
#pragma once

#include <array>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "base/config.h"
#include "base/status.h"
#include "myriad/myriad.h"
#include "rendezvous/peer_info.h"

namespace myriad {

struct Topology;

class Store;

// A receive combined on arrival: buf[i] = incoming[i] op with[i], element-wise (`with` may be buf itself).
struct Combine {
  const void* with = nullptr;
  myrDataType_t dtype = myrFloat32;
  myrRedOp_t op = myrSum;  // myrAvg combines as a sum; the algorithm divides at the end
};

struct Request {
  void* buf = nullptr;
  size_t bytes = 0;
  uint32_t tag = 0;
  bool done = false;
  Combine combine{};  // receives on connections that combinesOnReceive(), when combine.with is set
};

// How an executor sleeps until a transport has news for this rank. Read seq() before polling; sleep(seen, us)
// returns at once if anything happened since, else when the transport rings or after `us` microseconds.
class WakeHook {
 public:
  virtual ~WakeHook() = default;
  virtual uint32_t seq() const = 0;
  virtual void sleep(uint32_t seen, int us) = 0;
};

class Connection {
 public:
  explicit Connection(const PeerInfo& peer) : peer_(peer) {}
  virtual ~Connection() = default;
  // The request must stay alive and untouched until done (or the connection fails).
  virtual Status postSend(Request* r) = 0;
  virtual Status postRecv(Request* r) = 0;
  // Never blocks. An error names the peer; after one, the connection is unusable.
  virtual Status poll() = 0;
  // Called while a wait makes no progress: is the peer still there? (Cheap, but not free.)
  virtual Status checkAlive() = 0;
  virtual bool busy() const = 0;
  // The hook rung on every event of this connection, so that the executor may sleep on it instead of
  // polling; null when there is none (the executor then yields and naps).
  virtual WakeHook* wakeHook() const { return nullptr; }
  // True when postRecv honours Request::combine; otherwise the caller receives into staging and reduces.
  virtual bool combinesOnReceive() const { return false; }
  // Called when the communicator is destroyed, for every open connection in turn until each returns true or
  // the communicator's timeout passes: one non-blocking step of handing what completed sends left in this
  // connection's own buffers to the peer (a send is done once its bytes are buffered; a receiver that
  // attaches late must still find them), and of answering what the peer still waits for from this end. True
  // once nothing is left or the peer is gone. Never a blocking loop over one connection: the peer may be
  // turning its own connections too, and waits that go round the ranks (A on B, B on C, C on A) would hold
  // until the deadline.
  virtual bool drainStep() { return true; }
  // True while the connection must be polled although no posted request waits on it (multipath: chunks of
  // completed sends not yet acknowledged, which a failed path may force it to send again). The executor
  // polls such connections on every turn of its loop.
  virtual bool hasBackgroundWork() const { return false; }
  // What carries the data to and from this peer, as measured so far, in one line for myrDebugPeers (shm:
  // bytes through the FIFO and by single-copy reads; tcp: the socket's two ends; ...), so that tests can
  // assert which path really ran. Called on the thread that polls the connection.
  virtual std::string describe() const = 0;

  const PeerInfo& peer() const { return peer_; }
  // When poll() last moved bytes (or the first request was posted after an idle period).
  Clock::time_point lastProgress() const { return lastProgress_; }

 protected:
  void noteProgress() { lastProgress_ = Clock::now(); }
  void noteProgress(Clock::time_point now) { lastProgress_ = now; }
  // Queues a posted request; a connection that was idle starts its silence clock now.
  Status enqueue(std::deque<Request*>& queue, Request* r) {
    if (!busy()) noteProgress();
    r->done = false;
    queue.push_back(r);
    return Status::ok();
  }
  PeerInfo peer_;
  Clock::time_point lastProgress_ = Clock::now();
};

// What a transport knows of the communicator it serves.
struct TransportContext {
  int rank = 0;
  int nranks = 0;
  std::string commTag;  // unique per communicator: names shared-memory segments
  std::array<uint8_t, 16> secret{};
  const Config* config = nullptr;
  const std::atomic<bool>* abort = nullptr;
  Store* store = nullptr;              // the communicator's rendezvous store (rdma publishes its QPs there)
  const Topology* topology = nullptr;  // this machine's (rdma picks its NIC from it); null: unknown
  int gpu = -1;                        // the rank's CUDA device; -1: host memory (always, until the CUDA path exists)
};

class Transport {
 public:
  virtual ~Transport() = default;
  virtual const char* name() const = 0;
  virtual bool canReach(const PeerInfo& self, const PeerInfo& peer) const = 0;
  // May block up to the deadline; for peers that must accept, the connection completes later in poll().
  virtual Result<std::unique_ptr<Connection>> connect(const PeerInfo& peer) = 0;
  // [p, p + n) stays mapped until unpin(id): a buffer the user registered (myrCommRegister) or the
  // communicator's scratch memory. A transport may prepare per-buffer resources now and use them for every
  // message inside the range (rdma: one memory registration instead of one per message). An error leaves
  // nothing pinned. Called with the communicator's execution lock held, like connect() and poll().
  virtual Status pin(uint64_t id, void* p, size_t n) {
    (void)id, (void)p, (void)n;
    return Status::ok();
  }
  // The range is about to be freed: nothing may find it again. Messages still using it (possible only after
  // a failure) keep their resources until they end.
  virtual void unpin(uint64_t id) { (void)id; }
  // The hook this transport's connections ring (Connection::wakeHook); null when they ring none.
  virtual WakeHook* wakeHook() { return nullptr; }
  // What myrDebugNetPaths prints for this transport's peers (multipath telemetry); empty when nothing.
  virtual std::string telemetry() const { return ""; }
};

// Opens this rank's transports, in order of preference (the first that reaches a peer carries it), and
// fills in what `self` publishes to the other ranks (addresses). Lives outside the communicator's layer
// (transports/factory.h), so that adding a transport touches no core file.
using TransportFactory =
    std::function<Result<std::vector<std::unique_ptr<Transport>>>(const TransportContext& ctx, PeerInfo* self)>;

}  // namespace myriad
