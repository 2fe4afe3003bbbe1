// Checked collective cases. Each check builds `want`, the expected image of every byte of the receive
// buffer (poison where nothing may be written), and compares it with the buffer after the call; reduced
// regions are compared with checkReduction (tolerance for avg) and then copied into `want`. Buffers the
// call must only read are compared with their copy from before the call.
#include "tests/common/coll_check.h"

#include <algorithm>
#include <cstdio>
#include <cstring>

#include "tests/common/dtype_values.h"
#include "tests/common/mp_helpers.h"
#include "tests/common/reference.h"

namespace myriad::test {
namespace {

constexpr unsigned char kPoison = 0xA5;
constexpr size_t kGuard = 64;
using Bytes = std::vector<unsigned char>;

Bytes poisoned(size_t bytes) {
  return Bytes(bytes + kGuard, kPoison);
}

uint64_t mix64(uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

// The context of one running case: names it in every message.
struct Run {
  myrComm_t comm;
  int rank;
  int n;
  const CollCase& c;
  myrStream_t stream;
  uint64_t salt;
  size_t es;

  std::string where() const {
    return collCaseName(c) + " (rank " + std::to_string(rank) + " of " + std::to_string(n) + ", salt " +
           std::to_string(salt) + ")";
  }
  // Result of the call, then of the stream.
  std::string called(const char* fn, myrResult_t res) const {
    if (res != myrSuccess) return where() + ": " + resultText(fn, res, comm);
    const std::string err = syncStream(stream, comm);
    return err.empty() ? "" : where() + ": " + err;
  }
  // First byte where got differs from want, described by element and block of blockBytes.
  std::string compare(const char* what, const Bytes& got, const Bytes& want, size_t blockBytes) const {
    for (size_t i = 0; i < want.size(); ++i) {
      if (got[i] == want[i]) continue;
      char text[240];
      const size_t block = blockBytes > 0 ? i / blockBytes : 0;
      std::snprintf(text, sizeof(text), ": %s byte %zu (element %zu, block %zu of %zu B) is 0x%02x, want 0x%02x%s",
                    what, i, i / es, block, blockBytes, got[i], want[i],
                    want[i] == kPoison ? " (must stay untouched)" : "");
      return where() + text;
    }
    return "";
  }
  // Checks count reduced elements at got[at..] (reference indices from firstIndex), then copies them into want.
  std::string reduced(const Bytes& got, Bytes& want, size_t at, size_t count, size_t firstIndex) const {
    const Mismatches m = checkReduction(got.data() + at, count, c.type, c.op, n, salt, firstIndex);
    if (m.count > 0) {
      char text[200];
      std::snprintf(text, sizeof(text), ": %zu of %zu reduced elements wrong, first at [%zu]: got %.17g, want %.17g",
                    m.count, count, m.firstIndex, m.firstGot, m.firstWant);
      return where() + text;
    }
    std::memcpy(want.data() + at, got.data() + at, count * es);
    return "";
  }
};

// A buffer that a rank passes but must not be used (NULL is allowed there): NULL for odd counts, else a
// poisoned buffer that must stay so.
void* unusedBuffer(const Run& r, Bytes& storage) {
  return r.c.count % 2 == 1 ? nullptr : storage.data();
}

std::string broadcast(const Run& r) {
  const size_t bytes = r.c.count * r.es;
  const bool root = r.rank == r.c.root;
  Bytes send = poisoned(bytes), recv = poisoned(bytes);
  const void* sendPtr = nullptr;
  if (r.c.inPlace) {
    if (root) fillPattern(recv.data(), bytes, r.rank, 0, r.salt);
    sendPtr = recv.data();
  } else {
    if (root) fillPattern(send.data(), bytes, r.rank, 0, r.salt);
    sendPtr = root ? send.data() : unusedBuffer(r, send);
  }
  const Bytes sendBefore = send;
  Bytes want = poisoned(bytes);
  fillPattern(want.data(), bytes, r.c.root, 0, r.salt);
  std::string err =
      r.called("myrBroadcast", myrBroadcast(sendPtr, recv.data(), r.c.count, r.c.type, r.c.root, r.comm, r.stream));
  if (err.empty()) err = r.compare("recvbuff", recv, want, bytes);
  if (err.empty()) err = r.compare("sendbuff", send, sendBefore, bytes);
  return err;
}

std::string reduce(const Run& r) {
  const size_t bytes = r.c.count * r.es;
  const bool root = r.rank == r.c.root;
  Bytes send = poisoned(bytes), recv = poisoned(bytes);
  fillInput((r.c.inPlace ? recv : send).data(), r.c.count, r.c.type, r.c.op, r.rank, r.n, r.salt);
  const void* sendPtr = r.c.inPlace ? recv.data() : send.data();
  void* recvPtr = r.c.inPlace || root ? recv.data() : unusedBuffer(r, recv);
  const Bytes sendBefore = send;
  Bytes want = recv;  // off the root recvbuff is not used (in place it is sendbuff): it must stay as it was
  std::string err =
      r.called("myrReduce", myrReduce(sendPtr, recvPtr, r.c.count, r.c.type, r.c.op, r.c.root, r.comm, r.stream));
  if (err.empty() && root) err = r.reduced(recv, want, 0, r.c.count, 0);
  if (err.empty()) err = r.compare("recvbuff", recv, want, bytes);
  if (err.empty()) err = r.compare("sendbuff", send, sendBefore, bytes);
  return err;
}

std::string allGather(const Run& r) {
  const size_t bytes = r.c.count * r.es, me = static_cast<size_t>(r.rank);
  Bytes send = poisoned(bytes), recv = poisoned(bytes * r.n);
  fillPattern(send.data(), bytes, r.rank, 0, r.salt);
  const void* sendPtr = send.data();
  if (r.c.inPlace) {
    fillPattern(recv.data() + me * bytes, bytes, r.rank, 0, r.salt);
    sendPtr = recv.data() + me * bytes;
  }
  const Bytes sendBefore = send;
  Bytes want = poisoned(bytes * r.n);
  for (int s = 0; s < r.n; ++s) fillPattern(want.data() + static_cast<size_t>(s) * bytes, bytes, s, 0, r.salt);
  std::string err = r.called("myrAllGather", myrAllGather(sendPtr, recv.data(), r.c.count, r.c.type, r.comm, r.stream));
  if (err.empty()) err = r.compare("recvbuff", recv, want, bytes);
  if (err.empty()) err = r.compare("sendbuff", send, sendBefore, bytes);
  return err;
}

std::string reduceScatter(const Run& r) {
  const size_t bytes = r.c.count * r.es, me = static_cast<size_t>(r.rank), total = r.c.count * r.n;
  Bytes send = poisoned(bytes * r.n), recv = poisoned(bytes);
  fillInput(send.data(), total, r.c.type, r.c.op, r.rank, r.n, r.salt);
  const Bytes sendBefore = send;
  std::string err;
  if (r.c.inPlace) {  // recvbuff = sendbuff + rank * recvcount; the rest of sendbuff is only read
    Bytes want = send;
    err = r.called("myrReduceScatter", myrReduceScatter(send.data(), send.data() + me * bytes, r.c.count, r.c.type,
                                                        r.c.op, r.comm, r.stream));
    if (err.empty()) err = r.reduced(send, want, me * bytes, r.c.count, me * r.c.count);
    if (err.empty()) err = r.compare("sendbuff (in place)", send, want, bytes);
    return err;
  }
  Bytes want = poisoned(bytes);
  err = r.called("myrReduceScatter",
                 myrReduceScatter(send.data(), recv.data(), r.c.count, r.c.type, r.c.op, r.comm, r.stream));
  if (err.empty()) err = r.reduced(recv, want, 0, r.c.count, me * r.c.count);
  if (err.empty()) err = r.compare("recvbuff", recv, want, bytes);
  if (err.empty()) err = r.compare("sendbuff", send, sendBefore, bytes);
  return err;
}

std::string allToAll(const Run& r) {
  const size_t bytes = r.c.count * r.es, me = static_cast<size_t>(r.rank);
  Bytes send = poisoned(bytes * r.n), recv = poisoned(bytes * r.n);
  fillPattern((r.c.inPlace ? recv : send).data(), bytes * r.n, r.rank, 0, r.salt);
  const Bytes sendBefore = send;
  Bytes want = poisoned(bytes * r.n);
  for (int s = 0; s < r.n; ++s) fillPattern(want.data() + static_cast<size_t>(s) * bytes, bytes, s, me * bytes, r.salt);
  const void* sendPtr = r.c.inPlace ? recv.data() : send.data();
  std::string err = r.called("myrAllToAll", myrAllToAll(sendPtr, recv.data(), r.c.count, r.c.type, r.comm, r.stream));
  if (err.empty()) err = r.compare("recvbuff", recv, want, bytes);
  if (err.empty()) err = r.compare("sendbuff", send, sendBefore, bytes);
  return err;
}

std::string allToAllv(const Run& r) {
  const AllToAllvLayout L = allToAllvLayout(r.n, r.c.count, r.c.inPlace, r.salt);
  const size_t me = static_cast<size_t>(r.rank), n = static_cast<size_t>(r.n);
  std::vector<size_t> sendCounts(n), recvCounts(n);
  for (size_t p = 0; p < n; ++p) {
    sendCounts[p] = L.counts[me * n + p];
    recvCounts[p] = L.counts[p * n + me];
  }
  const size_t sendBytes = L.sendExtent[me] * r.es, recvBytes = L.recvExtent[me] * r.es;
  Bytes send = poisoned(sendBytes), recv = poisoned(recvBytes);
  // In place, sendBytes == recvBytes: the whole buffer holds this rank's pattern, gaps included.
  fillPattern((r.c.inPlace ? recv : send).data(), sendBytes, r.rank, 0, r.salt);
  const Bytes sendBefore = send;
  Bytes want = r.c.inPlace ? recv : poisoned(recvBytes);
  for (size_t s = 0; s < n; ++s) {
    fillPattern(want.data() + L.rdispls[me][s] * r.es, recvCounts[s] * r.es, static_cast<int>(s),
                L.sdispls[s][me] * r.es, r.salt);
  }
  const void* sendPtr = r.c.inPlace ? recv.data() : send.data();
  std::string err =
      r.called("myrAllToAllv", myrAllToAllv(sendPtr, sendCounts.data(), L.sdispls[me].data(), recv.data(),
                                            recvCounts.data(), L.rdispls[me].data(), r.c.type, r.comm, r.stream));
  if (err.empty()) err = r.compare("recvbuff", recv, want, 0);
  if (err.empty()) err = r.compare("sendbuff", send, sendBefore, 0);
  return err;
}

std::string gather(const Run& r) {
  const size_t bytes = r.c.count * r.es;
  const bool root = r.rank == r.c.root;
  Bytes send = poisoned(bytes), recv = poisoned(bytes * r.n);
  fillPattern(send.data(), bytes, r.rank, 0, r.salt);
  const void* sendPtr = send.data();
  void* recvPtr = root ? recv.data() : unusedBuffer(r, recv);
  if (r.c.inPlace && root) {
    fillPattern(recv.data() + static_cast<size_t>(r.rank) * bytes, bytes, r.rank, 0, r.salt);
    sendPtr = recv.data() + static_cast<size_t>(r.rank) * bytes;
  }
  const Bytes sendBefore = send;
  Bytes want = poisoned(bytes * r.n);
  for (int s = 0; s < r.n && root; ++s) fillPattern(want.data() + static_cast<size_t>(s) * bytes, bytes, s, 0, r.salt);
  std::string err = r.called("myrGather", myrGather(sendPtr, recvPtr, r.c.count, r.c.type, r.c.root, r.comm, r.stream));
  if (err.empty()) err = r.compare("recvbuff", recv, want, bytes);
  if (err.empty()) err = r.compare("sendbuff", send, sendBefore, bytes);
  return err;
}

std::string scatter(const Run& r) {
  const size_t bytes = r.c.count * r.es, me = static_cast<size_t>(r.rank);
  const bool root = r.rank == r.c.root;
  Bytes send = poisoned(bytes * r.n), recv = poisoned(bytes);
  if (root) fillPattern(send.data(), bytes * r.n, r.rank, 0, r.salt);
  const Bytes sendBefore = send;
  std::string err;
  if (r.c.inPlace && root) {  // recvbuff = sendbuff + root * count: the buffer must come back unchanged
    err = r.called("myrScatter",
                   myrScatter(send.data(), send.data() + me * bytes, r.c.count, r.c.type, r.c.root, r.comm, r.stream));
    return err.empty() ? r.compare("sendbuff (in place)", send, sendBefore, bytes) : err;
  }
  const void* sendPtr = root ? send.data() : unusedBuffer(r, send);
  Bytes want = poisoned(bytes);
  fillPattern(want.data(), bytes, r.c.root, me * bytes, r.salt);
  err = r.called("myrScatter", myrScatter(sendPtr, recv.data(), r.c.count, r.c.type, r.c.root, r.comm, r.stream));
  if (err.empty()) err = r.compare("recvbuff", recv, want, bytes);
  if (err.empty()) err = r.compare("sendbuff", send, sendBefore, bytes);
  return err;
}

void addMoving(std::vector<CollCase>& out, Coll coll, int n, bool quick, bool rooted) {
  std::vector<size_t> counts = quick ? std::vector<size_t>{1, 1009} : std::vector<size_t>{0, 1, 1009};
  if (!quick && n > 2) counts.push_back(static_cast<size_t>(n - 1));
  const std::vector<myrDataType_t> types =
      quick ? std::vector<myrDataType_t>{myrFloat32}
            : std::vector<myrDataType_t>{myrUint8, myrFloat16, myrFloat32, myrFloat64};
  for (myrDataType_t t : types) {
    for (size_t count : counts) {
      for (bool inPlace : {false, true}) {
        const bool everyRoot = rooted && (count == 1 || count == 1009) && (t == myrFloat32 || t == myrUint8);
        for (int root = everyRoot ? 0 : n - 1; root < n; ++root) out.push_back({coll, t, myrSum, count, root, inPlace});
      }
    }
  }
  const size_t large =
      coll == Coll::kAllToAll || coll == Coll::kAllToAllv ? (size_t{1} << 15) + 3 : (size_t{1} << 17) + 3;
  for (bool inPlace : {false, true}) out.push_back({coll, myrFloat32, myrSum, large, rooted ? n / 2 : 0, inPlace});
}

void addReducing(std::vector<CollCase>& out, Coll coll, int n, bool quick, bool rooted) {
  struct Pair {
    myrDataType_t type;
    myrRedOp_t op;
  };
  const std::vector<Pair> all = {{myrFloat32, myrSum},  {myrInt32, myrMax},      {myrFloat16, myrSum},
                                 {myrBfloat16, myrAvg}, {myrInt8, myrProd},      {myrUint8, myrMin},
                                 {myrFloat64, myrSum},  {myrInt64, myrSum},      {myrFloat8e4m3, myrMax},
                                 {myrUint32, myrAvg},   {myrFloat8e5m2, myrSum}, {myrUint64, myrProd}};
  const std::vector<Pair> pairs = quick ? std::vector<Pair>{all[0], all[1]} : all;
  const std::vector<size_t> counts = quick ? std::vector<size_t>{1, 1009} : std::vector<size_t>{0, 1, 1009};
  for (size_t i = 0; i < pairs.size(); ++i) {
    for (size_t count : counts) {
      for (bool inPlace : {false, true}) {
        const bool everyRoot = rooted && i < 2 && count > 0;
        const int fixed = static_cast<int>(i) % n;
        for (int root = everyRoot ? 0 : fixed; root <= (everyRoot ? n - 1 : fixed); ++root)
          out.push_back({coll, pairs[i].type, pairs[i].op, count, root, inPlace});
      }
    }
  }
  for (bool inPlace : {false, true}) out.push_back({coll, myrFloat32, myrSum, (size_t{1} << 17) + 3, n - 1, inPlace});
}

}  // namespace

const char* collName(Coll coll) {
  switch (coll) {
    case Coll::kAllReduce: return "allreduce";
    case Coll::kBroadcast: return "broadcast";
    case Coll::kReduce: return "reduce";
    case Coll::kAllGather: return "allgather";
    case Coll::kReduceScatter: return "reducescatter";
    case Coll::kAllToAll: return "alltoall";
    case Coll::kAllToAllv: return "alltoallv";
    case Coll::kGather: return "gather";
    case Coll::kScatter: return "scatter";
    case Coll::kBarrier: return "barrier";
  }
  return "?";
}

std::string collCaseName(const CollCase& c) {
  if (c.coll == Coll::kBarrier) return "barrier";
  std::string text = std::string(collName(c.coll)) + " " + dataTypeName(c.type);
  if (c.coll == Coll::kAllReduce || c.coll == Coll::kReduce || c.coll == Coll::kReduceScatter)
    text += std::string(" ") + redOpName(c.op);
  text += " count " + std::to_string(c.count);
  if (c.coll == Coll::kBroadcast || c.coll == Coll::kReduce || c.coll == Coll::kGather || c.coll == Coll::kScatter)
    text += " root " + std::to_string(c.root);
  return text + (c.inPlace ? " in-place" : " out-of-place");
}

AllToAllvLayout allToAllvLayout(int nranks, size_t maxCount, bool symmetric, uint64_t salt) {
  AllToAllvLayout L;
  const size_t n = static_cast<size_t>(nranks);
  L.nranks = nranks;
  L.counts.assign(n * n, 0);
  for (size_t s = 0; s < n; ++s) {
    for (size_t d = 0; d < n; ++d) {
      const size_t a = symmetric ? std::min(s, d) : s, b = symmetric ? std::max(s, d) : d;
      const uint64_t h = mix64(salt * 1315423911ULL + a * n + b);
      L.counts[s * n + d] = (h & 3) == 0 || maxCount == 0 ? 0 : static_cast<size_t>((h >> 8) % maxCount) + 1;
    }
  }
  L.sdispls.assign(n, std::vector<size_t>(n, 0));
  L.rdispls.assign(n, std::vector<size_t>(n, 0));
  L.sendExtent.assign(n, 0);
  L.recvExtent.assign(n, 0);
  for (size_t r = 0; r < n; ++r) {
    // Send blocks in rotated order, receive blocks in reverse order, each followed by a gap of 0..2 elements.
    size_t at = 0;
    for (size_t k = 0; k < n; ++k) {
      const size_t p = (r + k) % n;
      L.sdispls[r][p] = at;
      at += L.counts[r * n + p] + (p + r) % 3;
    }
    L.sendExtent[r] = at;
    if (symmetric) {
      L.rdispls[r] = L.sdispls[r];
      L.recvExtent[r] = at;
      continue;
    }
    at = 0;
    for (size_t k = n; k-- > 0;) {
      L.rdispls[r][k] = at;
      at += L.counts[k * n + r] + (k * 2 + r) % 3;
    }
    L.recvExtent[r] = at;
  }
  return L;
}

std::string runCollCase(myrComm_t comm, int rank, int nranks, const CollCase& c, myrStream_t stream, uint64_t salt) {
  const Run r{comm, rank, nranks, c, stream, salt, dataTypeSize(c.type)};
  switch (c.coll) {
    case Coll::kAllReduce:
      return runAllReduceCase(comm, rank, nranks, {c.type, c.op, c.count, c.inPlace}, stream, salt);
    case Coll::kBroadcast: return broadcast(r);
    case Coll::kReduce: return reduce(r);
    case Coll::kAllGather: return allGather(r);
    case Coll::kReduceScatter: return reduceScatter(r);
    case Coll::kAllToAll: return allToAll(r);
    case Coll::kAllToAllv: return allToAllv(r);
    case Coll::kGather: return gather(r);
    case Coll::kScatter: return scatter(r);
    case Coll::kBarrier: return r.called("myrBarrier", myrBarrier(comm, stream));
  }
  return "unknown collective";
}

std::string runCollCases(myrComm_t comm, int rank, int nranks, const std::vector<CollCase>& cases, myrStream_t stream,
                         uint64_t salt) {
  for (size_t i = 0; i < cases.size(); ++i) {
    std::string err = runCollCase(comm, rank, nranks, cases[i], stream, salt + i);
    if (!err.empty()) return "case " + std::to_string(i) + " of " + std::to_string(cases.size()) + ": " + err;
  }
  return "";
}

std::vector<CollCase> collCases(Coll coll, int nranks, bool quick) {
  std::vector<CollCase> out;
  switch (coll) {
    case Coll::kAllReduce:
    case Coll::kReduceScatter: addReducing(out, coll, nranks, quick, false); break;
    case Coll::kReduce: addReducing(out, coll, nranks, quick, true); break;
    case Coll::kBroadcast:
    case Coll::kGather:
    case Coll::kScatter: addMoving(out, coll, nranks, quick, true); break;
    case Coll::kAllGather:
    case Coll::kAllToAll: addMoving(out, coll, nranks, quick, false); break;
    case Coll::kAllToAllv:
      for (myrDataType_t t : {myrUint8, myrFloat32, myrFloat64}) {
        for (size_t maxCount : {size_t{0}, size_t{1}, size_t{7}, size_t{1009}}) {
          if (quick && (t != myrFloat32 || maxCount == 0)) continue;
          for (bool inPlace : {false, true}) out.push_back({coll, t, myrSum, maxCount, 0, inPlace});
        }
      }
      for (bool inPlace : {false, true}) out.push_back({coll, myrFloat32, myrSum, (size_t{1} << 15) + 3, 0, inPlace});
      break;
    case Coll::kBarrier:
      for (int i = 0; i < (quick ? 2 : 8); ++i) out.push_back({coll, myrUint8, myrSum, 0, 0, false});
      break;
  }
  return out;
}

}  // namespace myriad::test
