// Group state is thread-local, as in NCCL: each thread has its own nesting depth and queue.
#include "dispatch/group.h"

#include <memory>
#include <thread>

#include "dispatch/collectives.h"
#include "dispatch/select.h"

namespace myriad {
namespace {

struct Queued {
  CollArgs args;
  const Algorithm* algo;
  CallStream stream;
};

struct CommBatch {
  Comm* comm;
  std::vector<Queued> collectives;
  CollArgs p2p;  // every send and receive of the group on this communicator
  CallStream p2pStream;
  bool hasP2p = false;
};

struct GroupState {
  int depth = 0;
  std::vector<CommBatch> batches;  // in order of first use
};

thread_local GroupState tGroup;

CommBatch& batchOf(Comm& comm) {
  for (CommBatch& b : tGroup.batches)
    if (b.comm == &comm) return b;
  tGroup.batches.push_back(CommBatch{&comm, {}, {}, {}, false});
  tGroup.batches.back().p2p.kind = CollKind::kSendRecv;
  return tGroup.batches.back();
}

// Issues a batch; with `inline_` every call runs now on this thread, whatever stream it was issued on
// (the caller is already running on that stream).
Status issueBatch(CommBatch& b, bool inline_ = false) {
  Status first;
  for (Queued& q : b.collectives) {
    Status s = issueNow(*b.comm, std::move(q.args), q.algo, inline_ ? CallStream{} : q.stream);
    if (first.isOk()) first = s;
  }
  if (!b.hasP2p) return first;
  Status s = validateCollective(b.p2p, *b.comm);  // self sends and receives must pair up across the group
  if (s.isOk()) {
    auto algo = selectAlgorithm(b.p2p, b.comm->view(), b.comm->config());
    s = algo.isOk() ? issueNow(*b.comm, std::move(b.p2p), algo.value(), inline_ ? CallStream{} : b.p2pStream)
                    : algo.takeStatus();
  }
  return first.isOk() ? s : first;
}

// Runs every batch at once, one thread each: a call blocks until its peers join, and those peers may be
// driven by this very thread through another communicator of the group.
Status issueTogether(std::vector<CommBatch>& batches, bool inline_) {
  std::vector<Status> results(batches.size());
  std::vector<std::thread> threads;
  for (size_t i = 0; i < batches.size(); ++i)
    threads.emplace_back([&, i] { results[i] = issueBatch(batches[i], inline_); });
  for (auto& t : threads) t.join();
  for (Status& s : results)
    if (!s.isOk()) return s;
  return Status::ok();
}

// The one stream of a group over several communicators, or null when its calls block. Calls on different
// streams are InvalidUsage: their batches could be queued in a different order on every rank.
Result<CallStream> groupStream(const std::vector<CommBatch>& batches) {
  CallStream stream;
  bool first = true;
  for (const CommBatch& b : batches) {
    std::vector<CallStream> used;
    for (const Queued& q : b.collectives) used.push_back(q.stream);
    if (b.hasP2p) used.push_back(b.p2pStream);
    for (const CallStream& s : used) {
      if (!first && s != stream)
        return invalidUsage(
            "a group over several communicators must issue all its calls on one stream (or all blocking)");
      stream = s;
      first = false;
    }
  }
  return stream;
}

}  // namespace

bool groupActive() {
  return tGroup.depth > 0;
}

void groupStart() {
  ++tGroup.depth;
}

Status groupEnd() {
  if (tGroup.depth == 0) return invalidUsage("myrGroupEnd without a matching myrGroupStart on this thread");
  if (--tGroup.depth > 0) return Status::ok();
  std::vector<CommBatch> batches = std::move(tGroup.batches);
  tGroup.batches.clear();
  if (batches.size() == 1) return issueBatch(batches[0]);
  MYR_ASSIGN_OR_RETURN(CallStream call, groupStream(batches));
  // Blocking calls, and calls on a device stream (which only enqueue), are issued now.
  HostStream* stream = call.host;
  if (!stream) return issueTogether(batches, false);
  // One stream item runs the whole group, so that every rank queues it in its own program order.
  for (CommBatch& b : batches) b.comm->addPending(1);
  auto shared = std::make_shared<std::vector<CommBatch>>(std::move(batches));
  stream->enqueue([shared] {
    Status s = issueTogether(*shared, true);
    for (CommBatch& b : *shared) b.comm->addPending(-1);
    return s;
  });
  return Status::ok();
}

Status groupAdd(Comm& comm, CollArgs args, CallStream stream) {
  if (args.kind == CollKind::kSendRecv) {
    CommBatch& b = batchOf(comm);
    if (!b.hasP2p) b.p2pStream = stream;
    b.hasP2p = true;
    for (const P2pCall& c : args.p2p) b.p2p.p2p.push_back(c);
    return Status::ok();
  }
  MYR_ASSIGN_OR_RETURN(const Algorithm* algo, selectAlgorithm(args, comm.view(), comm.config()));
  batchOf(comm).collectives.push_back(Queued{std::move(args), algo, stream});
  return Status::ok();
}

}  // namespace myriad
