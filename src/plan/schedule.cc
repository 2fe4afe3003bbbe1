// Schedule: the builder methods and the text dump. Steps are appended; a step may only wait for steps
// added before it, so the step list is always in a valid topological order.
#include "plan/schedule.h"

#include <algorithm>
#include <cstdio>

#include "base/log.h"
#include "plan/dtype.h"

namespace myriad {

Schedule::Step Schedule::add(StepInfo s, const Deps& deps) {
  s.firstDep = static_cast<int32_t>(deps_.size());
  s.numDeps = static_cast<int32_t>(deps.size());
  for (Step d : deps) {
    MYR_ASSERT(d >= 0 && d < static_cast<Step>(steps_.size()));
    deps_.push_back(d);
  }
  steps_.push_back(s);
  return static_cast<Step>(steps_.size() - 1);
}

Schedule::Step Schedule::send(int peer, BufRef buf, size_t bytes, const Deps& deps) {
  StepInfo s{Kind::kSend};
  s.peer = peer;
  s.a = buf;
  s.n = bytes;
  return add(s, deps);
}

Schedule::Step Schedule::recv(int peer, BufRef buf, size_t bytes, const Deps& deps) {
  StepInfo s{Kind::kRecv};
  s.peer = peer;
  s.dst = buf;
  s.n = bytes;
  return add(s, deps);
}

Schedule::Step Schedule::recvReduce(int peer, BufRef dst, BufRef b, BufRef staging, size_t count, myrDataType_t dtype,
                                    myrRedOp_t op, const Deps& deps) {
  StepInfo s{Kind::kRecvReduce};
  s.peer = peer;
  s.dst = dst;
  s.b = b;
  s.staging = staging;
  s.n = count * dtypeSize(dtype);
  s.dtype = dtype;
  s.op = op;
  return add(s, deps);
}

Schedule::Step Schedule::reduce(BufRef dst, BufRef a, BufRef b, size_t count, myrDataType_t dtype, myrRedOp_t op,
                                const Deps& deps) {
  StepInfo s{Kind::kReduce};
  s.dst = dst;
  s.a = a;
  s.b = b;
  s.n = count;
  s.dtype = dtype;
  s.op = op;
  return add(s, deps);
}

Schedule::Step Schedule::copy(BufRef dst, BufRef src, size_t bytes, const Deps& deps) {
  StepInfo s{Kind::kCopy};
  s.dst = dst;
  s.a = src;
  s.n = bytes;
  return add(s, deps);
}

Schedule::Step Schedule::scaleAvg(BufRef buf, size_t count, myrDataType_t dtype, int n, const Deps& deps) {
  StepInfo s{Kind::kScale};
  s.dst = buf;
  s.n = count;
  s.dtype = dtype;
  s.divisor = n;
  return add(s, deps);
}

Schedule::Step Schedule::join(const Deps& deps) {
  return add(StepInfo{Kind::kJoin}, deps);
}

BufRef Schedule::reserveScratch(size_t bytes) {
  MYR_ASSERT(!scratchTaken_);
  scratchTaken_ = true;
  scratchBytes_ = bytes;
  return {BufRef::kScratch, 0};
}

BufRef Schedule::local(std::vector<uint8_t> init) {
  MYR_ASSERT(local_.empty());
  local_ = std::move(init);
  return {BufRef::kLocal, 0};
}

std::string bufName(const BufRef& b) {
  switch (b.base) {
    case BufRef::kNone: return "-";
    case BufRef::kSend: return "send";
    case BufRef::kRecv: return "recv";
    case BufRef::kScratch: return "scratch";
    case BufRef::kLocal: return "local";
    default: return "user" + std::to_string(b.base - BufRef::kUser);
  }
}

namespace {

std::string ref(const BufRef& b) {
  return b.valid() ? bufName(b) + "+" + std::to_string(b.offset) : "-";
}

const char* kindName(Schedule::Kind k) {
  switch (k) {
    case Schedule::Kind::kSend: return "send";
    case Schedule::Kind::kRecv: return "recv";
    case Schedule::Kind::kRecvReduce: return "recv-reduce";
    case Schedule::Kind::kReduce: return "reduce";
    case Schedule::Kind::kCopy: return "copy";
    case Schedule::Kind::kScale: return "scale";
    case Schedule::Kind::kJoin: return "join";
  }
  return "?";
}

}  // namespace

// One line per step: index, kind, peer ("to 3" / "from 3"), buffers, size, and "after i,j" for its
// dependencies. Sizes are bytes for messages and copies, elements for reduce and scale.
std::string Schedule::dump() const {
  std::string out = (name_.empty() ? std::string("schedule") : name_) + ": " + std::to_string(steps_.size()) +
                    " steps, scratch " + std::to_string(scratchBytes_) + " B" +
                    (local_.empty() ? "" : ", local " + std::to_string(local_.size()) + " B") +
                    (next_ ? ", then a second stage" : "") + "\n";
  for (size_t i = 0; i < steps_.size(); ++i) {
    const StepInfo& s = steps_[i];
    std::string line = std::to_string(i) + " " + kindName(s.kind);
    switch (s.kind) {
      case Kind::kSend:
        line += " to " + std::to_string(s.peer) + " " + ref(s.a) + " " + std::to_string(s.n) + " B";
        break;
      case Kind::kRecv:
        line += " from " + std::to_string(s.peer) + " " + ref(s.dst) + " " + std::to_string(s.n) + " B";
        break;
      case Kind::kRecvReduce:
        line += " from " + std::to_string(s.peer) + " " + ref(s.dst) + " = in " + opName(s.op) + " " + ref(s.b) + " " +
                std::to_string(s.n) + " B " + dtypeName(s.dtype) + " staging " + ref(s.staging);
        break;
      case Kind::kReduce:
        line += " " + ref(s.dst) + " = " + ref(s.a) + " " + opName(s.op) + " " + ref(s.b) + " " + std::to_string(s.n) +
                " x " + dtypeName(s.dtype);
        break;
      case Kind::kCopy: line += " " + ref(s.dst) + " = " + ref(s.a) + " " + std::to_string(s.n) + " B"; break;
      case Kind::kScale:
        line += " " + ref(s.dst) + " /= " + std::to_string(s.divisor) + " " + std::to_string(s.n) + " x " +
                dtypeName(s.dtype);
        break;
      case Kind::kJoin: break;
    }
    if (s.numDeps) {
      line += " after ";
      for (int32_t d = 0; d < s.numDeps; ++d)
        line += (d ? "," : "") + std::to_string(deps_[static_cast<size_t>(s.firstDep + d)]);
    }
    out += line + "\n";
  }
  return out;
}

}  // namespace myriad
