// Store: the rendezvous key-value space that ranks use to find each other (set/get with a deadline).
// Implementations: MemoryStore (threads of one process), FileStore (processes sharing a directory) and
// TcpStore (production: served by the process that called myrGetUniqueId). Values are immutable once set.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "base/clock.h"
#include "base/status.h"

namespace myriad {

class Store {
 public:
  virtual ~Store() = default;
  virtual Status set(const std::string& key, const Bytes& value) = 0;
  // Waits until `key` exists, `timeoutMs` passes (Timeout naming the key) or *abort becomes true.
  virtual Result<Bytes> get(const std::string& key, int timeoutMs, const std::atomic<bool>* abort) = 0;
  // Never waits: the value, or an empty optional-like Result with Code::kNotSupported when absent.
  virtual Result<Bytes> tryGet(const std::string& key) = 0;
  // Waits until every one of `keys` exists (their values, in order) or `stopKey` does (when not empty: its
  // value, and the keys' values are not read), `timeoutMs` passes (Timeout naming a missing key) or *abort
  // becomes true. One request however many keys, where the store can (TcpStore); here, gets one after the
  // other, the stop key read between slices of 50 ms.
  struct WaitAll {
    bool stopped = false;
    Bytes stop;                 // stopped: the stop key's value
    std::vector<Bytes> values;  // not stopped: the keys' values, in order
  };
  virtual Result<WaitAll> waitAll(const std::vector<std::string>& keys, const std::string& stopKey, int timeoutMs,
                                  const std::atomic<bool>* abort);
  // Bounds later set/tryGet calls (after init they must fail fast rather than wait for a dead root).
  virtual void setTimeoutMs(int /*ms*/) {}
  // Human-readable location for messages ("tcp store 10.0.0.1:4000").
  virtual std::string describe() const = 0;
};

class MemoryStore final : public Store {
 public:
  MemoryStore();
  ~MemoryStore() override;
  Status set(const std::string& key, const Bytes& value) override;
  Result<Bytes> get(const std::string& key, int timeoutMs, const std::atomic<bool>* abort) override;
  Result<Bytes> tryGet(const std::string& key) override;
  std::string describe() const override { return "memory store"; }

 private:
  struct State;
  std::unique_ptr<State> state_;
};

// Keys become files in `dir`; a value is written to a temporary name and renamed, so readers never see
// a partial value.
class FileStore final : public Store {
 public:
  explicit FileStore(std::string dir) : dir_(std::move(dir)) {}
  Status set(const std::string& key, const Bytes& value) override;
  Result<Bytes> get(const std::string& key, int timeoutMs, const std::atomic<bool>* abort) override;
  Result<Bytes> tryGet(const std::string& key) override;
  std::string describe() const override { return "file store " + dir_; }

 private:
  std::string pathOf(const std::string& key) const;
  std::string dir_;
};

// A view of another store with every key prefixed: the rendezvous of a communicator split from a parent
// reuses the parent's store under its own prefix. `alsoAbort` (optional, e.g. the parent's abort flag, which
// must outlive this store's waits) ends a wait as the caller's own abort flag does.
class PrefixStore final : public Store {
 public:
  PrefixStore(std::shared_ptr<Store> base, std::string prefix, const std::atomic<bool>* alsoAbort = nullptr)
      : base_(std::move(base)), prefix_(std::move(prefix)), alsoAbort_(alsoAbort) {}
  Status set(const std::string& key, const Bytes& value) override { return base_->set(prefix_ + key, value); }
  Result<Bytes> get(const std::string& key, int timeoutMs, const std::atomic<bool>* abort) override;
  Result<Bytes> tryGet(const std::string& key) override { return base_->tryGet(prefix_ + key); }
  Result<WaitAll> waitAll(const std::vector<std::string>& keys, const std::string& stopKey, int timeoutMs,
                          const std::atomic<bool>* abort) override;
  void setTimeoutMs(int ms) override { base_->setTimeoutMs(ms); }
  std::string describe() const override { return base_->describe() + " (keys " + prefix_ + "*)"; }

 private:
  std::shared_ptr<Store> base_;
  std::string prefix_;
  const std::atomic<bool>* alsoAbort_;
};

// Key names must be printable and short: both ends of the tcp store enforce these bounds.
constexpr size_t kMaxStoreKey = 256;
constexpr size_t kMaxStoreValue = size_t{64} << 20;
Status checkStoreKey(const std::string& key);

}  // namespace myriad
