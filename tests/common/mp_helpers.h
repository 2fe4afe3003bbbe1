// Building blocks for the bodies of forked test ranks: transport choice, result text, one checked
// all-reduce. Invariant: everything here runs in a child and reports failures as text, never as gtest
// assertions (an assertion failed in a child would die with the child).
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <ostream>
#include <string>
#include <vector>

#include "myriad/myriad.h"
#include "tests/common/fork_ranks.h"

namespace myriad::test {

// kShmCma: shm with MYRIAD_SHM_MODE=cma, so messages are read from the sender's memory (process_vm_readv).
enum class Transport { kShm, kShmCma, kTcp };
const char* transportName(Transport transport);
inline void PrintTo(Transport transport, std::ostream* os) {
  *os << transportName(transport);
}  // gtest names
// In a child, before myrCommInitRank: tcp sets MYRIAD_DISABLE_SHM=1, shm clears it; shm_cma also sets
// MYRIAD_SHM_MODE=cma.
void useTransport(Transport transport);

// The usual parameter of an mp test: transport x rank count x blocking or host stream.
struct MpParam {
  Transport transport = Transport::kShm;
  int nranks = 2;
  bool hostStream = false;
};
void PrintTo(const MpParam& p, std::ostream* os);
std::string mpParamName(const MpParam& p);  // "shm_n3_hoststream", for INSTANTIATE_TEST_SUITE_P
// shm and tcp x n in [minRanks, maxRanks] x blocking and host stream, and shm_cma blocking.
std::vector<MpParam> mpParams(int minRanks = 2, int maxRanks = 5);

// In a child, before init: MYRIAD_HOST_ID for this rank when `nhosts` > 1 ("host<h>", ranks split into
// nhosts contiguous groups as evenly as possible; shm inside a host, tcp between), and MYRIAD_ALGO when
// `algo` is not empty.
int hostOfRank(int rank, int nranks, int nhosts);
void useHosts(int rank, int nranks, int nhosts);
void forceAlgorithms(const std::string& algo);

// "myrAllReduce returned remote error (6): <myrGetLastError(comm)>"; comm may be NULL.
std::string resultText(const char* call, myrResult_t result, myrComm_t comm);

// myrCommInitRank; "" on success, else resultText.
std::string initComm(myrComm_t* comm, int nranks, const myrUniqueId& id, int rank);
// A host stream when hostStream, else NULL (blocking calls); "" on success.
std::string makeStream(bool hostStream, myrStream_t* stream);
// Destroys the stream (when not NULL), then the communicator; "" on success.
std::string finishComm(myrComm_t comm, myrStream_t stream);
// The usual body of a forked rank, after the caller chose transport, hosts and algorithms: joins the
// communicator, makes the stream `hostStream` asks for, runs body(comm, stream) ("" or what went wrong),
// tears both down. Returns the child's exit code; a failure is reported with the rank.
int runInChild(int nranks, int rank, const myrUniqueId& id, bool hostStream,
               const std::function<std::string(myrComm_t comm, myrStream_t stream)>& body);
// myrStreamSynchronize when stream is not NULL; "" on success.
std::string syncStream(myrStream_t stream, myrComm_t comm);

struct AllReduceCase {
  myrDataType_t type = myrFloat32;
  myrRedOp_t op = myrSum;
  size_t count = 0;
  bool inPlace = false;
};
std::string caseName(const AllReduceCase& c);  // "float sum count 1009 in-place"

// Fills this rank's input, runs the all-reduce on `stream` (NULL: blocking) and checks recvbuff against the
// reference, that sendbuff is unchanged (out of place) and that nothing past `count` was written.
// Returns "" on success, else what went wrong.
std::string runAllReduceCase(myrComm_t comm, int rank, int nranks, const AllReduceCase& c, myrStream_t stream,
                             uint64_t salt);

// A loopback socket bound to port 0 (the kernel picks a free port); returns it listening when
// `keepListening`, else closes it and returns 0 (the port is then free, barring a race). -1 on failure.
int loopbackSocket(bool keepListening, int* port);
// "127.0.0.1:<port>": a MYRIAD_COMM_ID on loopback.
std::string commIdFor(int port);
// In a child: MYRIAD_COMM_ID, then the id every rank makes for itself, then init; "" or what failed, with
// the library's message (myrGetLastError(NULL) holds the last error of a call without a communicator).
std::string joinByCommId(const std::string& commId, int nranks, int rank, myrComm_t* comm);

// myrDebugPeers(comm) as a string (or "myrDebugPeers failed"), and its line about `peer` without "peer N: "
// ("" when there is none).
std::string debugPeers(myrComm_t comm);
std::string peerLine(const std::string& text, int peer);

// True when `text` contains `word`, ignoring case.
bool containsWord(const std::string& text, const std::string& word);
// "" when `got` is `want` and myrGetLastError(comm) mentions `word` (comm may be NULL); else what differs.
std::string expectError(const char* what, myrResult_t got, myrResult_t want, myrComm_t comm, const char* word);
// True when `text` says "rank <rank>" (any case) not followed by another digit: "rank 1" but not "rank 12".
bool mentionsRank(const std::string& text, int rank);

}  // namespace myriad::test

// In a child's body: on failure, report where, which rank and why, then return 1 from the body.
#define MYR_CHILD_CHECK(cond, message)                                                                 \
  do {                                                                                                 \
    if (!(cond)) {                                                                                     \
      ::myriad::test::childReport(std::string(__FILE__) + ":" + std::to_string(__LINE__) + ": rank " + \
                                  std::to_string(::myriad::test::childRank()) + ": " #cond ": " +      \
                                  std::string(message));                                               \
      return 1;                                                                                        \
    }                                                                                                  \
  } while (0)
