// Child-side helpers of tests/mp. runAllReduceCase poisons the receive buffer (0xA5) and sizes it past
// `count`, so results left unwritten, stale or written out of bounds are all caught.
#include "tests/common/mp_helpers.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "tests/common/dtype_values.h"
#include "tests/common/reference.h"

namespace myriad::test {
namespace {
constexpr unsigned char kPoison = 0xA5;
constexpr size_t kGuardBytes = 64;
}  // namespace

const char* transportName(Transport transport) {
  return transport == Transport::kTcp ? "tcp" : transport == Transport::kShmCma ? "shm_cma" : "shm";
}

void useTransport(Transport transport) {
  unsetenv("MYRIAD_SHM_MODE");
  if (transport == Transport::kTcp) {
    setenv("MYRIAD_DISABLE_SHM", "1", 1);
    return;
  }
  unsetenv("MYRIAD_DISABLE_SHM");
  if (transport == Transport::kShmCma) setenv("MYRIAD_SHM_MODE", "cma", 1);
}

void PrintTo(const MpParam& p, std::ostream* os) {
  *os << transportName(p.transport) << " n=" << p.nranks << (p.hostStream ? " host stream" : " blocking");
}

std::string mpParamName(const MpParam& p) {
  return std::string(transportName(p.transport)) + "_n" + std::to_string(p.nranks) +
         (p.hostStream ? "_hoststream" : "_blocking");
}

std::vector<MpParam> mpParams(int minRanks, int maxRanks) {
  std::vector<MpParam> params;
  for (Transport t : {Transport::kShm, Transport::kTcp}) {
    for (int n = minRanks; n <= maxRanks; ++n) {
      for (bool hostStream : {false, true}) params.push_back({t, n, hostStream});
    }
  }
  for (int n = minRanks; n <= maxRanks; ++n) params.push_back({Transport::kShmCma, n, false});
  return params;
}

int hostOfRank(int rank, int nranks, int nhosts) {
  return nhosts <= 1 ? 0 : rank * nhosts / nranks;
}

void useHosts(int rank, int nranks, int nhosts) {
  if (nhosts <= 1) {
    unsetenv("MYRIAD_HOST_ID");
    return;
  }
  setenv("MYRIAD_HOST_ID", ("host" + std::to_string(hostOfRank(rank, nranks, nhosts))).c_str(), 1);
}

void forceAlgorithms(const std::string& algo) {
  if (algo.empty()) {
    unsetenv("MYRIAD_ALGO");
    return;
  }
  setenv("MYRIAD_ALGO", algo.c_str(), 1);
}

std::string resultText(const char* call, myrResult_t result, myrComm_t comm) {
  std::string text = std::string(call) + " returned " + myrGetErrorString(result) + " (" +
                     std::to_string(static_cast<int>(result)) + ")";
  if (comm != nullptr) {
    const char* last = myrGetLastError(comm);
    text += ": ";
    text += last != nullptr ? last : "(myrGetLastError returned NULL)";
  }
  return text;
}

std::string initComm(myrComm_t* comm, int nranks, const myrUniqueId& id, int rank) {
  const myrResult_t res = myrCommInitRank(comm, nranks, id, rank);
  if (res == myrSuccess) return "";
  return resultText("myrCommInitRank", res, nullptr) + " (rank " + std::to_string(rank) + " of " +
         std::to_string(nranks) + ")";
}

std::string makeStream(bool hostStream, myrStream_t* stream) {
  *stream = nullptr;
  if (!hostStream) return "";
  const myrResult_t res = myrStreamCreate(stream);
  return res == myrSuccess ? "" : resultText("myrStreamCreate", res, nullptr);
}

std::string finishComm(myrComm_t comm, myrStream_t stream) {
  if (stream != nullptr) {
    const myrResult_t res = myrStreamDestroy(stream);
    if (res != myrSuccess) return resultText("myrStreamDestroy", res, nullptr);
  }
  const myrResult_t res = myrCommDestroy(comm);
  return res == myrSuccess ? "" : resultText("myrCommDestroy", res, nullptr);
}

int runInChild(int nranks, int rank, const myrUniqueId& id, bool hostStream,
               const std::function<std::string(myrComm_t, myrStream_t)>& body) {
  myrComm_t comm = nullptr;
  std::string err = initComm(&comm, nranks, id, rank);
  MYR_CHILD_CHECK(err.empty(), err);
  myrStream_t stream = nullptr;
  err = makeStream(hostStream, &stream);
  MYR_CHILD_CHECK(err.empty(), err);
  err = body(comm, stream);
  MYR_CHILD_CHECK(err.empty(), err);
  err = finishComm(comm, stream);
  MYR_CHILD_CHECK(err.empty(), err);
  return 0;
}

std::string syncStream(myrStream_t stream, myrComm_t comm) {
  if (stream == nullptr) return "";
  const myrResult_t res = myrStreamSynchronize(stream);
  return res == myrSuccess ? "" : resultText("myrStreamSynchronize", res, comm);
}

std::string caseName(const AllReduceCase& c) {
  return std::string(dataTypeName(c.type)) + " " + redOpName(c.op) + " count " + std::to_string(c.count) +
         (c.inPlace ? " in-place" : " out-of-place");
}

std::string runAllReduceCase(myrComm_t comm, int rank, int nranks, const AllReduceCase& c, myrStream_t stream,
                             uint64_t salt) {
  const size_t dataBytes = c.count * dataTypeSize(c.type);
  std::vector<unsigned char> send(dataBytes + kGuardBytes, kPoison);
  std::vector<unsigned char> recv(dataBytes + kGuardBytes, kPoison);
  fillInput(send.data(), c.count, c.type, c.op, rank, nranks, salt);
  const std::vector<unsigned char> sendBefore = send;
  const void* sendPtr = send.data();
  if (c.inPlace) {
    std::memcpy(recv.data(), send.data(), dataBytes);
    sendPtr = recv.data();
  }
  const std::string where = caseName(c) + " (rank " + std::to_string(rank) + " of " + std::to_string(nranks) + ")";
  myrResult_t res = myrAllReduce(sendPtr, recv.data(), c.count, c.type, c.op, comm, stream);
  if (res != myrSuccess) return where + ": " + resultText("myrAllReduce", res, comm);
  if (stream != nullptr) {
    res = myrStreamSynchronize(stream);
    if (res != myrSuccess) return where + ": " + resultText("myrStreamSynchronize", res, comm);
  }
  const Mismatches m = checkReduction(recv.data(), c.count, c.type, c.op, nranks, salt);
  if (m.count > 0) {
    char text[200];
    std::snprintf(text, sizeof(text), ": %zu of %zu elements wrong, first at [%zu]: got %.17g, want %.17g", m.count,
                  c.count, m.firstIndex, m.firstGot, m.firstWant);
    return where + text;
  }
  if (!c.inPlace && send != sendBefore) return where + ": the send buffer was modified";
  for (size_t i = dataBytes; i < recv.size(); ++i) {
    if (recv[i] != kPoison) return where + ": byte " + std::to_string(i) + " past the end of recvbuff was written";
  }
  return "";
}

bool containsWord(const std::string& text, const std::string& word) {
  auto lower = [](std::string s) {
    std::transform(s.begin(), s.end(), s.begin(), [](unsigned char ch) { return std::tolower(ch); });
    return s;
  };
  return lower(text).find(lower(word)) != std::string::npos;
}

bool mentionsRank(const std::string& text, int rank) {
  std::string lower = text;
  std::transform(lower.begin(), lower.end(), lower.begin(), [](unsigned char ch) { return std::tolower(ch); });
  const std::string needle = "rank " + std::to_string(rank);
  for (size_t at = lower.find(needle); at != std::string::npos; at = lower.find(needle, at + 1)) {
    const size_t after = at + needle.size();
    if (after >= lower.size() || !std::isdigit(static_cast<unsigned char>(lower[after]))) return true;
  }
  return false;
}

std::string expectError(const char* what, myrResult_t got, myrResult_t want, myrComm_t comm, const char* word) {
  const std::string last = myrGetLastError(comm);
  if (got != want)
    return std::string(what) + ": want " + myrGetErrorString(want) + ", got " + myrGetErrorString(got) + ": " + last;
  if (!containsWord(last, word))
    return std::string(what) + ": the last error \"" + last + "\" does not mention " + word;
  return "";
}

int loopbackSocket(bool keepListening, int* port) {
  const int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof(a);
  if (fd < 0 || bind(fd, reinterpret_cast<sockaddr*>(&a), len) != 0 ||
      getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len) != 0 || (keepListening && listen(fd, 4) != 0)) {
    if (fd >= 0) close(fd);
    return -1;
  }
  *port = ntohs(a.sin_port);
  if (keepListening) return fd;
  close(fd);
  return 0;
}

std::string commIdFor(int port) {
  return "127.0.0.1:" + std::to_string(port);
}

std::string joinByCommId(const std::string& commId, int nranks, int rank, myrComm_t* comm) {
  setenv("MYRIAD_COMM_ID", commId.c_str(), 1);
  setenv("MYRIAD_INIT_TIMEOUT_MS", "20000", 1);
  myrUniqueId id;
  const myrResult_t res = myrGetUniqueId(&id);
  if (res != myrSuccess) return resultText("myrGetUniqueId", res, nullptr) + ": " + myrGetLastError(nullptr);
  const myrResult_t init = myrCommInitRank(comm, nranks, id, rank);
  if (init == myrSuccess) return "";
  return resultText("myrCommInitRank", init, nullptr) + ": " + myrGetLastError(nullptr);
}

std::string debugPeers(myrComm_t comm) {
  size_t len = 0;
  if (myrDebugPeers(comm, nullptr, &len) != myrSuccess) return "myrDebugPeers failed";
  std::string text(len, '\0');
  if (myrDebugPeers(comm, text.data(), &len) != myrSuccess) return "myrDebugPeers failed";
  text.resize(len > 0 ? len - 1 : 0);
  return text;
}

std::string peerLine(const std::string& text, int peer) {
  const std::string head = "peer " + std::to_string(peer) + ": ";
  const size_t at = text.find(head);
  if (at == std::string::npos) return "";
  const size_t end = text.find('\n', at);
  return text.substr(at + head.size(), end == std::string::npos ? std::string::npos : end - at - head.size());
}

}  // namespace myriad::test
