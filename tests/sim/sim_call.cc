// SimCall: per collective, which buffers a rank holds, what goes in them, and what must come out. Data-moving
// collectives use Pattern sources (source_ + rank, or source_ + from * n + to for all-to-all blocks), so a
// block delivered to the wrong place names its true source; reductions use PeriodicReduction.
#include "sim_call.h"

#include <algorithm>

#include "tests/common/dtype_values.h"

namespace myriad::sim {

bool reduces(CollKind k) {
  return k == CollKind::kAllReduce || k == CollKind::kReduce || k == CollKind::kReduceScatter;
}

bool rooted(CollKind k) {
  return k == CollKind::kBroadcast || k == CollKind::kReduce || k == CollKind::kGather || k == CollKind::kScatter;
}

size_t bytesPerRank(CollKind kind, size_t count, myrDataType_t type, int nranks) {
  size_t b = count * test::dataTypeSize(type), n = static_cast<size_t>(nranks);
  switch (kind) {
    case CollKind::kAllGather:
    case CollKind::kReduceScatter:
    case CollKind::kGather:
    case CollKind::kScatter: return b * (n + 1);
    case CollKind::kAllToAll: return 2 * b * n;
    default: return 2 * b;
  }
}

std::string describe(const SimCombo& c, CollKind kind) {
  std::string o = "count " + std::to_string(c.count) + " " + test::dataTypeName(c.type);
  if (reduces(kind)) o += std::string(" ") + test::redOpName(c.op);
  o += c.inPlace ? " in place" : " out of place";
  if (rooted(kind)) o += " root " + std::to_string(c.root);
  if (c.nullUnused) o += " (unused buffers NULL)";
  return o;
}

SimCall::SimCall(CollKind kind, const SimCombo& combo, int nranks, const test::Pattern& pattern, int source)
    : kind_(kind),
      c_(combo),
      n_(nranks),
      es_(test::dataTypeSize(combo.type)),
      pattern_(pattern),
      source_(source),
      bufs_(static_cast<size_t>(nranks)) {
  if (kind == CollKind::kAllReduce || kind == CollKind::kReduce) ref_.emplace(c_.type, c_.op, n_, c_.count, c_.salt);
  if (kind == CollKind::kReduceScatter) ref_.emplace(c_.type, c_.op, n_, c_.count * static_cast<size_t>(n_), c_.salt);
  for (int r = 0; r < n_; ++r) setUp(r);
}

std::vector<std::vector<uint8_t>> SimCall::image() {
  std::vector<std::vector<uint8_t>> out;
  for (Bufs& b : bufs_) out.push_back(b.send.storage()), out.push_back(b.recv.storage());
  return out;
}

void SimCall::restore(const std::vector<std::vector<uint8_t>>& image) {
  size_t i = 0;
  for (Bufs& b : bufs_) {
    std::copy(image[i].begin(), image[i].end(), b.send.storage().begin()), ++i;
    std::copy(image[i].begin(), image[i].end(), b.recv.storage().begin()), ++i;
  }
}

void SimCall::setUp(int r) {
  Bufs& b = bufs_[static_cast<size_t>(r)];
  const size_t n = static_cast<size_t>(n_), me = static_cast<size_t>(r), bytes = c_.count * es_, total = bytes * n;
  const bool root = r == c_.root, in = c_.inPlace;
  CollArgs a;
  a.kind = kind_, a.count = c_.count, a.dtype = c_.type, a.op = c_.op, a.root = c_.root;
  // Sizes of the two buffers this rank owns (in place: only the one that holds both).
  size_t sendBytes = 0, recvBytes = 0;
  switch (kind_) {
    case CollKind::kAllReduce: sendBytes = bytes, recvBytes = in ? 0 : bytes; break;
    case CollKind::kReduce:
      sendBytes = bytes, recvBytes = in ? 0 : bytes;
      b.recvUsed = root;
      break;
    case CollKind::kBroadcast:
      sendBytes = bytes, recvBytes = in ? 0 : bytes;
      b.sendUsed = root || in;  // in place off the root, sendbuff is recvbuff
      break;
    case CollKind::kReduceScatter: sendBytes = total, recvBytes = in ? 0 : bytes; break;
    case CollKind::kAllGather: sendBytes = in ? 0 : bytes, recvBytes = total; break;
    case CollKind::kAllToAll: sendBytes = total, recvBytes = in ? 0 : total; break;
    case CollKind::kGather:
      sendBytes = in && root ? 0 : bytes, recvBytes = root ? total : bytes;
      b.recvUsed = root;
      break;
    case CollKind::kScatter:
      sendBytes = root ? total : bytes, recvBytes = in && root ? 0 : bytes;
      b.sendUsed = root;
      break;
    default: break;  // barrier, no buffers
  }
  // The send buffer holds the result (in place), so it is not checked to be unchanged.
  b.sendResult =
      in && (kind_ == CollKind::kAllReduce || kind_ == CollKind::kReduceScatter || kind_ == CollKind::kAllToAll ||
             (kind_ == CollKind::kReduce && root) || (kind_ == CollKind::kBroadcast && !root));
  // Off their 64-byte alignment by 0-2 elements, as user buffers may be.
  b.send.resize(sendBytes, static_cast<size_t>(c_.salt % 3) * es_), b.send.fillCanary();
  b.recv.resize(recvBytes, static_cast<size_t>((c_.salt >> 8) % 3) * es_), b.recv.fillCanary();
  uint8_t *send = b.send.data(), *recv = b.recv.data();
  switch (kind_) {
    case CollKind::kAllReduce:
    case CollKind::kReduce:
      ref_->fillInput(send, r);
      if (in) recv = send;
      break;
    case CollKind::kReduceScatter:
      ref_->fillInput(send, r);
      if (in) recv = send + me * bytes;
      break;
    case CollKind::kBroadcast:
      if (root) pattern_.fill(send, bytes, source_ + r);
      if (in) recv = send;
      break;
    case CollKind::kAllGather:
      if (in) send = recv + me * bytes;
      pattern_.fill(send, bytes, source_ + r);
      break;
    case CollKind::kAllToAll:
      for (size_t p = 0; p < n; ++p) pattern_.fill(send + p * bytes, bytes, source_ + static_cast<int>(me * n + p));
      if (in) recv = send;
      break;
    case CollKind::kGather:
      if (in && root) send = recv + me * bytes;
      pattern_.fill(send, bytes, source_ + r);
      break;
    case CollKind::kScatter:
      if (root)
        for (size_t p = 0; p < n; ++p) pattern_.fill(send + p * bytes, bytes, source_ + static_cast<int>(p));
      if (in && root) recv = send + me * bytes;
      break;
    default: send = recv = nullptr; break;
  }
  b.input.assign(b.send.data(), b.send.data() + b.send.size());
  a.sendbuff = !b.sendUsed && c_.nullUnused ? nullptr : send;
  a.recvbuff = !b.recvUsed && c_.nullUnused ? nullptr : recv;
  args_.push_back(a);
}

std::string SimCall::checkResult(int r, const uint8_t* out) const {
  const size_t n = static_cast<size_t>(n_), me = static_cast<size_t>(r), bytes = c_.count * es_;
  switch (kind_) {
    case CollKind::kAllReduce: return ref_->check(out, 0, c_.count);
    case CollKind::kReduce: return r == c_.root ? ref_->check(out, 0, c_.count) : "";
    case CollKind::kReduceScatter: return ref_->check(out, me * c_.count, c_.count);
    case CollKind::kBroadcast: return pattern_.check(out, bytes, source_ + c_.root, 0, "recvbuff:");
    case CollKind::kScatter: return pattern_.check(out, bytes, source_ + r, 0, "recvbuff:");
    case CollKind::kAllGather:
    case CollKind::kGather:
      if (kind_ == CollKind::kGather && r != c_.root) return "";
      for (size_t p = 0; p < n; ++p) {
        std::string e = pattern_.check(out + p * bytes, bytes, source_ + static_cast<int>(p), 0,
                                       "recvbuff block " + std::to_string(p) + ":");
        if (!e.empty()) return e;
      }
      return "";
    case CollKind::kAllToAll:
      for (size_t p = 0; p < n; ++p) {
        std::string e = pattern_.check(out + p * bytes, bytes, source_ + static_cast<int>(p * n + me), 0,
                                       "block from rank " + std::to_string(p) + ":");
        if (!e.empty()) return e;
      }
      return "";
    default: return "";
  }
}

std::string SimCall::check(int r) const {
  const Bufs& b = bufs_[static_cast<size_t>(r)];
  const CollArgs& a = args_[static_cast<size_t>(r)];
  std::string e = checkResult(r, static_cast<const uint8_t*>(a.recvbuff));
  if (e.empty()) e = b.send.guardsIntact("sendbuff");
  if (e.empty()) e = b.recv.guardsIntact("recvbuff");
  if (e.empty() && b.sendUsed && !b.sendResult) e = test::unchanged(b.send.data(), b.input, "sendbuff");
  if (e.empty() && !b.sendUsed) e = b.send.untouched(0, b.send.size(), "unused sendbuff");
  if (e.empty() && !b.recvUsed && b.recv.size()) e = b.recv.untouched(0, b.recv.size(), "unused recvbuff");
  return e;
}

}  // namespace myriad::sim
