// Host memory (page-aligned, touched at allocation so page faults are never timed; a host stream from
// myrStreamCreate unless -z 1), the CUDA probe run in a child process, and the fallbacks of builds without CUDA.
#include "benchmarks/common/device_memory.h"

#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <sstream>
#include <vector>

namespace myriad::bench {
namespace {

struct FreeDeleter {
  void operator()(unsigned char* p) const { std::free(p); }
};

class HostMemory : public RankMemory {
 public:
  explicit HostMemory(bool blocking) : blocking_(blocking) {}
  ~HostMemory() override {
    if (stream_ != nullptr) (void)myrStreamDestroy(stream_);
  }
  MemoryKind kind() const override { return MemoryKind::kHost; }
  bool open(int /*localRank*/, std::string* error) override {
    if (blocking_ || stream_ != nullptr) return true;
    const myrResult_t res = myrStreamCreate(&stream_);
    if (res == myrSuccess) return true;
    *error = std::string("myrStreamCreate failed: ") + myrGetErrorString(res);
    return false;
  }
  unsigned char* allocate(size_t bytes, bool /*libraryAlloc*/, std::string* error) override {
    const size_t rounded = (std::max<size_t>(bytes, 1) + 4095) / 4096 * 4096;
    std::unique_ptr<unsigned char, FreeDeleter> b(static_cast<unsigned char*>(std::aligned_alloc(4096, rounded)));
    if (!b) {
      *error = "cannot allocate " + std::to_string(rounded) + " bytes of host memory";
      return nullptr;
    }
    std::memset(b.get(), 0, rounded);
    buffers_.push_back(std::move(b));
    return buffers_.back().get();
  }
  bool upload(void* buffer, const void* host, size_t bytes, std::string* /*error*/) override {
    if (buffer != host && bytes > 0) std::memcpy(buffer, host, bytes);
    return true;
  }
  bool download(void* host, const void* buffer, size_t bytes, std::string* /*error*/) override {
    if (buffer != host && bytes > 0) std::memcpy(host, buffer, bytes);
    return true;
  }
  myrStream_t stream() const override { return stream_; }
  bool sync(std::string* error) override {
    if (stream_ == nullptr) return true;
    const myrResult_t res = myrStreamSynchronize(stream_);
    if (res == myrSuccess) return true;
    *error = std::string("myrStreamSynchronize failed: ") + myrGetErrorString(res);
    return false;
  }

 private:
  bool blocking_;
  myrStream_t stream_ = nullptr;
  std::vector<std::unique_ptr<unsigned char, FreeDeleter>> buffers_;
};

// The probe's answer through a pipe: devices, name and reason on three lines.
CudaProbe probeInChild() {
  CudaProbe failed;
  int fds[2];
  if (pipe(fds) != 0) {
    failed.reason = std::string("cannot ask CUDA from a child process: pipe: ") + std::strerror(errno);
    return failed;
  }
  std::fflush(nullptr);  // or the child would print this process's buffered text again
  const pid_t pid = fork();
  if (pid == 0) {
    close(fds[0]);
    const CudaProbe p = probeCudaHere();
    const std::string text = std::to_string(p.devices) + "\n" + p.name + "\n" + p.reason + "\n";
    for (size_t done = 0; done < text.size();) {
      const ssize_t n = write(fds[1], text.data() + done, text.size() - done);
      if (n <= 0 && errno != EINTR) break;
      if (n > 0) done += static_cast<size_t>(n);
    }
    _exit(0);  // no exit handlers: the CUDA runtime's belong to this child only
  }
  close(fds[1]);
  if (pid < 0) {
    close(fds[0]);
    failed.reason = std::string("cannot ask CUDA from a child process: fork: ") + std::strerror(errno);
    return failed;
  }
  std::string text;
  char chunk[256];
  for (;;) {
    const ssize_t n = read(fds[0], chunk, sizeof(chunk));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    text.append(chunk, static_cast<size_t>(n));
  }
  close(fds[0]);
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    failed.reason = "the CUDA probe (a child process) died" +
                    (WIFSIGNALED(status) ? std::string(" of signal ") + strsignal(WTERMSIG(status)) : std::string());
    return failed;
  }
  CudaProbe p;
  std::istringstream in(text);
  std::string devices;
  std::getline(in, devices);
  std::getline(in, p.name);
  std::getline(in, p.reason);
  p.devices = std::atoi(devices.c_str());
  return p;
}

}  // namespace

CudaProbe probeCuda(bool inChild) {
  if (!cudaBuilt() || !inChild) return probeCudaHere();
  return probeInChild();
}

std::unique_ptr<RankMemory> makeRankMemory(MemoryKind kind, bool blocking) {
  if (kind == MemoryKind::kCuda) return makeCudaMemory();
  return std::make_unique<HostMemory>(blocking);
}

#ifdef MYRIAD_HAVE_CUDA
bool cudaBuilt() {
  return true;
}
#else
bool cudaBuilt() {
  return false;
}

CudaProbe probeCudaHere() {
  CudaProbe p;
  p.reason = "the benchmarks were built without CUDA (configure with -DMYRIAD_WITH_CUDA=ON)";
  return p;
}

// Never reached through benchMain, which refuses --memory cuda in these builds first.
std::unique_ptr<RankMemory> makeCudaMemory() {
  class NoCuda : public HostMemory {
   public:
    NoCuda() : HostMemory(true) {}
    MemoryKind kind() const override { return MemoryKind::kCuda; }
    bool open(int, std::string* error) override {
      *error = probeCudaHere().reason;
      return false;
    }
  };
  return std::make_unique<NoCuda>();
}
#endif

}  // namespace myriad::bench
