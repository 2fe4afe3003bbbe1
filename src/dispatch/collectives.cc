// Validation and issue of collective calls. The checks follow NCCL's rules: which buffers each rank reads
// or writes, which in-place forms are allowed, and that the other ranks' arguments (root, peers) are in
// range. A buffer that is not used on this rank (recvbuff of reduce or gather off the root, sendbuff of
// broadcast or scatter off the root) may be NULL.
#include "dispatch/collectives.h"

#include "base/log.h"
#include "device/device.h"
#include "dispatch/group.h"
#include "dispatch/registry.h"
#include "dispatch/select.h"
#include "exec/device_executor.h"
#include "exec/host_executor.h"
#include "plan/dtype.h"

namespace myriad {
namespace {

struct Checker {
  const CollArgs& a;
  const Comm& comm;
  size_t es;
  std::string who;

  Status fail(const std::string& what) const { return invalidArgument(who + collName(a.kind) + ": " + what); }
  // `count` elements of `buf`, which this rank uses: non-NULL when not empty, no overflow.
  Status buffer(const char* name, const void* buf, size_t count) const {
    if (count > (SIZE_MAX / 4) / es)
      return fail(std::string(name) + " of " + std::to_string(count) + " elements is too large");
    if (count > 0 && !buf) return fail(std::string(name) + " is NULL with " + std::to_string(count) + " elements");
    return Status::ok();
  }
  // Ok when the buffers are disjoint or equal to the in-place form `inPlaceSend`.
  Status aliasing(const void* send, size_t sendCount, const void* recv, size_t recvCount,
                  const void* inPlaceSend) const {
    if (!send || !recv || sendCount == 0 || recvCount == 0 || send == inPlaceSend) return Status::ok();
    auto s = reinterpret_cast<uintptr_t>(send), r = reinterpret_cast<uintptr_t>(recv);
    if (s < r + recvCount * es && r < s + sendCount * es)
      return fail(inPlaceSend == recv
                      ? "sendbuff and recvbuff overlap without being equal (in place needs sendbuff == recvbuff)"
                      : "sendbuff and recvbuff overlap other than in the in-place form");
    return Status::ok();
  }
  Status root() const {
    if (a.root < 0 || a.root >= comm.nranks())
      return fail("root " + std::to_string(a.root) + " is out of range [0, " + std::to_string(comm.nranks()) + ")");
    return Status::ok();
  }
  Status peerRank(int peer) const {
    if (peer < 0 || peer >= comm.nranks())
      return fail("peer " + std::to_string(peer) + " is out of range [0, " + std::to_string(comm.nranks()) + ")");
    return Status::ok();
  }
};

const uint8_t* offset(const void* base, size_t elems, size_t es) {
  return base ? static_cast<const uint8_t*>(base) + elems * es : nullptr;
}

Status checkAllToAllv(const Checker& c) {
  const CollArgs& a = c.a;
  size_t n = static_cast<size_t>(c.comm.nranks());
  if (a.sendCounts.size() != n || a.sendDispls.size() != n || a.recvCounts.size() != n || a.recvDispls.size() != n)
    return c.fail("sendcounts, sdispls, recvcounts and rdispls need one entry per rank");
  size_t sendExtent = 0, recvExtent = 0;
  for (size_t p = 0; p < n; ++p) {
    if (a.sendCounts[p] > SIZE_MAX / 8 || a.sendDispls[p] > SIZE_MAX / 8 || a.recvCounts[p] > SIZE_MAX / 8 ||
        a.recvDispls[p] > SIZE_MAX / 8)
      return c.fail("count or displacement of peer " + std::to_string(p) + " is too large");
    if (a.sendCounts[p]) sendExtent = std::max(sendExtent, a.sendDispls[p] + a.sendCounts[p]);
    if (a.recvCounts[p]) recvExtent = std::max(recvExtent, a.recvDispls[p] + a.recvCounts[p]);
  }
  size_t self = static_cast<size_t>(c.comm.rank());
  if (a.sendCounts[self] != a.recvCounts[self])
    return c.fail("sendcounts[rank] (" + std::to_string(a.sendCounts[self]) + ") differs from recvcounts[rank] (" +
                  std::to_string(a.recvCounts[self]) + ")");
  MYR_TRY(c.buffer("sendbuff", a.sendbuff, sendExtent));
  MYR_TRY(c.buffer("recvbuff", a.recvbuff, recvExtent));
  return c.aliasing(a.sendbuff, sendExtent, a.recvbuff, recvExtent, a.recvbuff);
}

Status checkP2p(const Checker& c) {
  int selfSends = 0, selfRecvs = 0;
  for (const P2pCall& p : c.a.p2p) {
    MYR_TRY(c.peerRank(p.peer));
    if (p.bytes > 0 && !p.buf) return c.fail(std::string(p.send ? "sendbuff" : "recvbuff") + " is NULL");
    if (p.peer == c.comm.rank()) ++(p.send ? selfSends : selfRecvs);
  }
  // Inside a group the pairs are checked over the whole group, when it ends.
  if (selfSends != selfRecvs && !groupActive())
    return invalidUsage(c.who + std::to_string(selfSends) + " send(s) to self but " + std::to_string(selfRecvs) +
                        " receive(s) from self: a rank sends to itself only inside a group that also receives");
  return Status::ok();
}

}  // namespace

Status validateCollective(const CollArgs& a, const Comm& comm) {
  std::string who = "rank " + std::to_string(comm.rank()) + ": ";
  if (!validDtype(a.dtype))
    return invalidArgument(who + "unknown datatype " + std::to_string(static_cast<int>(a.dtype)));
  if (!validOp(a.op)) return invalidArgument(who + "unknown reduction op " + std::to_string(static_cast<int>(a.op)));
  Checker c{a, comm, dtypeSize(a.dtype), who};
  size_t n = static_cast<size_t>(comm.nranks()), me = static_cast<size_t>(comm.rank());
  bool isRoot = a.root == comm.rank();
  if (a.count > (SIZE_MAX / 4) / c.es / n) return c.fail("count " + std::to_string(a.count) + " is too large");
  switch (a.kind) {
    case CollKind::kAllReduce:
      MYR_TRY(c.buffer("sendbuff", a.sendbuff, a.count));
      MYR_TRY(c.buffer("recvbuff", a.recvbuff, a.count));
      return c.aliasing(a.sendbuff, a.count, a.recvbuff, a.count, a.recvbuff);
    case CollKind::kBroadcast:
      MYR_TRY(c.root());
      if (isRoot) MYR_TRY(c.buffer("sendbuff", a.sendbuff, a.count));
      MYR_TRY(c.buffer("recvbuff", a.recvbuff, a.count));
      return isRoot ? c.aliasing(a.sendbuff, a.count, a.recvbuff, a.count, a.recvbuff) : Status::ok();
    case CollKind::kReduce:
      MYR_TRY(c.root());
      MYR_TRY(c.buffer("sendbuff", a.sendbuff, a.count));
      if (isRoot) MYR_TRY(c.buffer("recvbuff", a.recvbuff, a.count));
      return isRoot ? c.aliasing(a.sendbuff, a.count, a.recvbuff, a.count, a.recvbuff) : Status::ok();
    case CollKind::kAllGather:
      MYR_TRY(c.buffer("sendbuff", a.sendbuff, a.count));
      MYR_TRY(c.buffer("recvbuff", a.recvbuff, a.count * n));
      return c.aliasing(a.sendbuff, a.count, a.recvbuff, a.count * n, offset(a.recvbuff, me * a.count, c.es));
    case CollKind::kReduceScatter: {
      MYR_TRY(c.buffer("sendbuff", a.sendbuff, a.count * n));
      MYR_TRY(c.buffer("recvbuff", a.recvbuff, a.count));
      // In place: recvbuff == sendbuff + rank * recvcount, i.e. sendbuff == recvbuff - rank * recvcount.
      bool inPlace = a.sendbuff && offset(a.sendbuff, me * a.count, c.es) == a.recvbuff;
      return c.aliasing(a.sendbuff, a.count * n, a.recvbuff, a.count, inPlace ? a.sendbuff : a.recvbuff);
    }
    case CollKind::kAllToAll:
      if (!a.sendCounts.empty()) return checkAllToAllv(c);
      MYR_TRY(c.buffer("sendbuff", a.sendbuff, a.count * n));
      MYR_TRY(c.buffer("recvbuff", a.recvbuff, a.count * n));
      return c.aliasing(a.sendbuff, a.count * n, a.recvbuff, a.count * n, a.recvbuff);
    case CollKind::kGather:
      MYR_TRY(c.root());
      MYR_TRY(c.buffer("sendbuff", a.sendbuff, a.count));
      if (!isRoot) return Status::ok();
      MYR_TRY(c.buffer("recvbuff", a.recvbuff, a.count * n));
      return c.aliasing(a.sendbuff, a.count, a.recvbuff, a.count * n, offset(a.recvbuff, me * a.count, c.es));
    case CollKind::kScatter: {
      MYR_TRY(c.root());
      MYR_TRY(c.buffer("recvbuff", a.recvbuff, a.count));
      if (!isRoot) return Status::ok();
      MYR_TRY(c.buffer("sendbuff", a.sendbuff, a.count * n));
      bool inPlace = a.sendbuff && offset(a.sendbuff, me * a.count, c.es) == a.recvbuff;
      return c.aliasing(a.sendbuff, a.count * n, a.recvbuff, a.count, inPlace ? a.sendbuff : a.recvbuff);
    }
    case CollKind::kBarrier: return Status::ok();
    case CollKind::kSendRecv: return checkP2p(c);
  }
  return internalError("unknown collective kind");
}

namespace {

std::string bufferKinds(const CollArgs& a, const Device& dev) {
  std::string out;
  auto add = [&](const char* name, const void* p) {
    if (!p) return;
    out += out.empty() ? "" : ", ";
    out += std::string(name) + (dev.isDeviceMemory(p) ? " is device memory" : " is host memory");
  };
  add("sendbuff", a.sendbuff);
  add("recvbuff", a.recvbuff);
  for (const P2pCall& c : a.p2p) add(c.send ? "a send buffer" : "a receive buffer", c.buf);
  return out;
}

}  // namespace

Result<Device*> callDevice(const CollArgs& args, const Comm& comm, const CallStream& stream) {
  size_t onDevice = 0, total = 0;
  Device* dev = usableDevice();  // one atomic load: this runs on every call
  auto count = [&](const void* p) {
    if (!p) return;
    ++total;
    if (dev && dev->isDeviceMemory(p)) ++onDevice;
  };
  count(args.sendbuff);
  count(args.recvbuff);
  for (const P2pCall& c : args.p2p) count(c.buf);
  // The common case first, without building any text: host buffers, blocking or on a host stream.
  if (onDevice == 0 && !stream.device) return nullptr;
  const std::string me = "rank " + std::to_string(comm.rank()) + ": ";
  if (stream.host)
    return invalidArgument(me +
                           "device buffers on a host stream (myrStreamCreate): pass the device's stream (a "
                           "cudaStream_t) instead");
  if (onDevice == 0 && total > 0)
    return invalidArgument(me +
                           "the stream is not a host stream (myrStreamCreate), and the buffers are host "
                           "memory: host buffers take a host stream or NULL");
  // Device buffers, or no buffers at all (a barrier, empty calls) ordered on a device stream.
  if (!dev)
    return invalidArgument(me + "the stream is not a host stream (myrStreamCreate), and there is no device: " +
                           processDevice().status().message());
  if (onDevice != total)
    return invalidArgument(me + "one call takes host or device buffers, not both: " + bufferKinds(args, *dev));
  return dev;
}

Status issueNow(Comm& comm, CollArgs args, const Algorithm* algo, CallStream stream) {
  MYR_TRY(comm.usable());
  MYR_ASSIGN_OR_RETURN(Device * device, callDevice(args, comm, stream));
  if (device) {
    MYR_ASSIGN_OR_RETURN(DeviceComm * dc, comm.deviceComm(*device));
    std::lock_guard<std::mutex> lock(comm.execMutex());
    MYR_TRY(comm.usable());
    const uint64_t seq = comm.flight().begin(args, algo->name(), true);
    Status s = [&] {
      auto schedule = algo->plan(args, comm.view());
      if (!schedule.isOk()) return comm.fail(schedule.takeStatus().addContext(algo->name()));
      comm.flight().planned(seq, schedule.value());
      return DeviceExecutor(comm, *dc, static_cast<DeviceStream*>(stream.device))
          .execute(schedule.take(), args)
          .addContext(algo->name());
    }();
    comm.flight().end(seq, s);  // enqueued (or refused); the device runs it later
    return s;
  }
  auto execute = [&comm, algo](const CollArgs& a) -> Status {
    std::lock_guard<std::mutex> lock(comm.execMutex());
    MYR_TRY(comm.usable());
    MYR_LOG(kTrace, kColl, comm.rank(),
            std::string(algo->name()) + " count " + std::to_string(a.count) + " " + dtypeName(a.dtype) + " " +
                opName(a.op));
    const uint64_t seq = comm.flight().begin(a, algo->name(), false);
    Status s = [&] {
      auto schedule = algo->plan(a, comm.view());
      if (!schedule.isOk()) return comm.fail(schedule.takeStatus().addContext(algo->name()));
      comm.flight().planned(seq, schedule.value());
      return HostExecutor(comm).execute(schedule.take(), a).addContext(algo->name());
    }();
    comm.flight().end(seq, s);
    return s;
  };
  if (!stream.host) return execute(args);
  comm.addPending(1);
  stream.host->enqueue([&comm, execute, args = std::move(args)] {
    Status s = execute(args);
    comm.addPending(-1);
    return s;
  });
  return Status::ok();
}

Status issueCollective(Comm& comm, CollArgs args, CallStream stream) {
  MYR_TRY(validateCollective(args, comm));
  MYR_TRY(comm.usable());
  MYR_TRY(callDevice(args, comm, stream).status());
  if (groupActive()) return groupAdd(comm, std::move(args), stream);
  MYR_ASSIGN_OR_RETURN(const Algorithm* algo, selectAlgorithm(args, comm.view(), comm.config()));
  return issueNow(comm, std::move(args), algo, stream);
}

}  // namespace myriad
