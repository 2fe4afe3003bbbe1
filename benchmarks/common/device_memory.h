// Where one rank's buffers live and which stream its calls go on: host memory (a host stream, or NULL with
// -z 1) or CUDA device memory (a cudaStream_t per rank, cast to myrStream_t). The sweep fills and checks host
// images of the buffers and moves them with upload/download, so it has one code path for both kinds.
// Invariant: CUDA is first used in the process that runs the rank; a process that forks ranks asks about CUDA
// only from a child of its own (a process that has initialised CUDA cannot fork children that use it).
#pragma once

#include <cstddef>
#include <memory>
#include <string>

#include "myriad/myriad.h"

namespace myriad::bench {

enum class MemoryKind { kHost, kCuda };

// The CUDA devices a process sees.
struct CudaProbe {
  int devices = 0;     // 0: none usable, see reason
  std::string name;    // device 0's name
  std::string reason;  // why none: a build without CUDA, no driver, no device
};

// True when the benchmarks were built with CUDA (MYRIAD_HAVE_CUDA).
bool cudaBuilt();

// Asks the CUDA runtime, in this process, or with `inChild` in a child process forked for the purpose, so that
// this one stays free of CUDA and may still fork ranks that use it.
CudaProbe probeCuda(bool inChild);

class RankMemory {
 public:
  virtual ~RankMemory() = default;
  virtual MemoryKind kind() const = 0;
  // Picks this rank's device (cuda: localRank modulo the device count, so ranks may share one) and makes the
  // stream. Before the rank's first collective: the library takes the device current then as its own.
  virtual bool open(int localRank, std::string* error) = 0;
  // A zero-filled buffer of max(bytes, 1) bytes, freed with this object. cuda: cudaMalloc, or myrMemAlloc with
  // `libraryAlloc` (-R 1, as nccl-tests allocates with ncclMemAlloc when it registers).
  virtual unsigned char* allocate(size_t bytes, bool libraryAlloc, std::string* error) = 0;
  // buffer[0, bytes) = host[0, bytes), and back; ordered after the calls on stream(), done when they return.
  // Nothing to do when the buffer is the host image itself (host memory).
  virtual bool upload(void* buffer, const void* host, size_t bytes, std::string* error) = 0;
  virtual bool download(void* host, const void* buffer, size_t bytes, std::string* error) = 0;
  // The stream of the collectives; NULL: blocking calls (host memory with -z 1).
  virtual myrStream_t stream() const = 0;
  // Waits for every call issued on stream().
  virtual bool sync(std::string* error) = 0;
  // The device of the buffers: -1 and "host" for host memory.
  virtual int device() const { return -1; }
  virtual std::string deviceName() const { return "host"; }
};

// Host memory takes `blocking` (-z); CUDA memory always has a stream. A kCuda object exists only in CUDA builds
// (elsewhere the result fails every call with the reason).
std::unique_ptr<RankMemory> makeRankMemory(MemoryKind kind, bool blocking);

// In CUDA builds defined in cuda_memory.cc, else in device_memory.cc (fallbacks that say why not).
CudaProbe probeCudaHere();
std::unique_ptr<RankMemory> makeCudaMemory();

}  // namespace myriad::bench
