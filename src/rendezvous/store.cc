// MemoryStore and FileStore.
#include "rendezvous/store.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <condition_variable>
#include <map>
#include <mutex>
#include <thread>

namespace myriad {

Status checkStoreKey(const std::string& key) {
  if (key.empty() || key.size() > kMaxStoreKey) return invalidArgument("store key of bad length");
  for (char c : key)
    if (c < 0x21 || c > 0x7e || c == '/' || c == '\\') return invalidArgument("store key with bad character");
  return Status::ok();
}

struct MemoryStore::State {
  std::mutex mu;
  std::condition_variable cv;
  std::map<std::string, Bytes> kv;
};

MemoryStore::MemoryStore() : state_(std::make_unique<State>()) {}
MemoryStore::~MemoryStore() = default;

Status MemoryStore::set(const std::string& key, const Bytes& value) {
  MYR_TRY(checkStoreKey(key));
  std::lock_guard<std::mutex> lock(state_->mu);
  state_->kv[key] = value;
  state_->cv.notify_all();
  return Status::ok();
}

Result<Bytes> MemoryStore::get(const std::string& key, int timeoutMs, const std::atomic<bool>* abort) {
  auto deadline = Clock::now() + std::chrono::milliseconds(timeoutMs);
  std::unique_lock<std::mutex> lock(state_->mu);
  while (true) {
    auto it = state_->kv.find(key);
    if (it != state_->kv.end()) return it->second;
    if (abort && abort->load()) return Status(Code::kRemoteError, "aborted while waiting for key '" + key + "'");
    if (Clock::now() >= deadline)
      return Status(Code::kTimeout,
                    "memory store: key '" + key + "' not set within " + std::to_string(timeoutMs) + " ms");
    // Short waits so that an abort is seen promptly.
    state_->cv.wait_for(lock, std::chrono::milliseconds(10));
  }
}

Result<Bytes> MemoryStore::tryGet(const std::string& key) {
  std::lock_guard<std::mutex> lock(state_->mu);
  auto it = state_->kv.find(key);
  if (it == state_->kv.end()) return notSupported("absent");
  return it->second;
}

std::string FileStore::pathOf(const std::string& key) const {
  return dir_ + "/" + key;
}

Status FileStore::set(const std::string& key, const Bytes& value) {
  MYR_TRY(checkStoreKey(key));
  mkdir(dir_.c_str(), 0700);
  std::string tmp = pathOf(key) + ".tmp." + std::to_string(getpid()) + "." +
                    std::to_string(std::hash<std::thread::id>()(std::this_thread::get_id()));
  int fd = open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  if (fd < 0) return systemError("file store: create " + tmp, errno);
  size_t off = 0;
  while (off < value.size()) {
    ssize_t n = write(fd, value.data() + off, value.size() - off);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      int err = errno;
      close(fd);
      return systemError("file store: write " + tmp, err);
    }
    off += static_cast<size_t>(n);
  }
  close(fd);
  if (rename(tmp.c_str(), pathOf(key).c_str()) != 0) return systemError("file store: rename to " + pathOf(key), errno);
  return Status::ok();
}

Result<Bytes> FileStore::tryGet(const std::string& key) {
  MYR_TRY(checkStoreKey(key));
  int fd = open(pathOf(key).c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    if (errno == ENOENT) return notSupported("absent");
    return systemError("file store: open " + pathOf(key), errno);
  }
  Bytes out;
  uint8_t buf[65536];
  while (true) {
    ssize_t n = read(fd, buf, sizeof(buf));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    out.insert(out.end(), buf, buf + n);
  }
  close(fd);
  return out;
}

Result<Bytes> FileStore::get(const std::string& key, int timeoutMs, const std::atomic<bool>* abort) {
  auto deadline = Clock::now() + std::chrono::milliseconds(timeoutMs);
  auto pause = std::chrono::microseconds(100);
  while (true) {
    auto r = tryGet(key);
    if (r.isOk() || r.status().code() != Code::kNotSupported) return r;
    if (abort && abort->load()) return Status(Code::kRemoteError, "aborted while waiting for key '" + key + "'");
    if (Clock::now() >= deadline)
      return Status(Code::kTimeout,
                    describe() + ": key '" + key + "' not set within " + std::to_string(timeoutMs) + " ms");
    std::this_thread::sleep_for(pause);
    pause = std::min(pause * 2, std::chrono::microseconds(10000));
  }
}

}  // namespace myriad

namespace myriad {

Result<Store::WaitAll> Store::waitAll(const std::vector<std::string>& keys, const std::string& stopKey, int timeoutMs,
                                      const std::atomic<bool>* abort) {
  if (keys.empty()) return invalidArgument("store wait-all of no keys");
  for (const std::string& k : keys) MYR_TRY(checkStoreKey(k));
  if (!stopKey.empty()) MYR_TRY(checkStoreKey(stopKey));
  const auto deadline = deadlineIn(timeoutMs);
  WaitAll out;
  out.values.resize(keys.size());
  std::vector<bool> have(keys.size(), false);
  for (size_t next = 0;;) {
    if (!stopKey.empty()) {
      auto stop = tryGet(stopKey);
      if (stop.isOk()) {
        out.stopped = true;
        out.stop = std::move(stop.value());
        out.values.clear();
        return out;
      }
      if (stop.status().code() != Code::kNotSupported) return stop.takeStatus();
    }
    while (next < keys.size() && have[next]) ++next;
    if (next == keys.size()) return out;
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
    if (left <= 0)
      return Status(Code::kTimeout,
                    describe() + ": key '" + keys[next] + "' not set within " + std::to_string(timeoutMs) + " ms");
    const int64_t slice = stopKey.empty() ? left : std::min<int64_t>(left, 50);
    auto got = get(keys[next], static_cast<int>(std::max<int64_t>(slice, 1)), abort);
    if (got.isOk()) {
      out.values[next] = std::move(got.value());
      have[next] = true;
    } else if (got.status().code() != Code::kTimeout) {
      return got.takeStatus();
    }
  }
}

namespace {

// A wait on the base store in slices of 200 ms, so that `flag` (the parent communicator's failure) is seen
// within one: `wait(ms)` waits up to ms; a timeout before the deadline waits again.
template <typename Wait>
auto sliced(const std::atomic<bool>& flag, const std::string& what, int timeoutMs, Wait wait) -> decltype(wait(1)) {
  constexpr int kSliceMs = 200;
  const auto deadline = deadlineIn(timeoutMs);
  for (;;) {
    if (flag.load(std::memory_order_acquire))
      return Status(Code::kRemoteError,
                    "the parent communicator failed while waiting for " + what + " (see the parent's error)");
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
    auto got = wait(static_cast<int>(std::clamp<int64_t>(left, 1, kSliceMs)));
    if (got.isOk() || got.status().code() != Code::kTimeout || left <= kSliceMs) return got;
  }
}

}  // namespace

Result<Store::WaitAll> PrefixStore::waitAll(const std::vector<std::string>& keys, const std::string& stopKey,
                                            int timeoutMs, const std::atomic<bool>* abort) {
  if (keys.empty()) return invalidArgument("store wait-all of no keys");  // as the base store says
  std::vector<std::string> full;
  for (const std::string& k : keys) full.push_back(prefix_ + k);
  const std::string stop = stopKey.empty() ? stopKey : prefix_ + stopKey;
  if (!alsoAbort_) return base_->waitAll(full, stop, timeoutMs, abort);
  return sliced(*alsoAbort_, "'" + keys.front() + "' in " + describe(), timeoutMs,
                [&](int ms) { return base_->waitAll(full, stop, ms, abort); });
}

Result<Bytes> PrefixStore::get(const std::string& key, int timeoutMs, const std::atomic<bool>* abort) {
  if (!alsoAbort_) return base_->get(prefix_ + key, timeoutMs, abort);
  return sliced(*alsoAbort_, "'" + key + "' in " + describe(), timeoutMs,
                [&](int ms) { return base_->get(prefix_ + key, ms, abort); });
}

}  // namespace myriad
