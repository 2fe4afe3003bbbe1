// TcpStore: the client side; one persistent connection per store, requests serialised by a mutex.
#include <poll.h>

#include <algorithm>
#include <chrono>
#include <thread>

#include "base/wire.h"
#include "rendezvous/tcp_store.h"

namespace myriad {

Status TcpStore::ensureConnected(Fd& conn, Clock::time_point deadline, const std::atomic<bool>* abort) {
  if (conn.get() >= 0) return Status::ok();
  // A root that closes the connection during the hello dropped a client too slow to answer (thousands of
  // ranks starting at once on a few cores): a new connection is tried, after a pause that doubles.
  constexpr int kHelloAttempts = 4;
  auto pause = std::chrono::milliseconds(50);
  for (int attempt = 1;; ++attempt) {
    auto fd = connectTo(root_, deadline, abort);
    if (!fd.isOk()) {
      Status s = fd.takeStatus();
      return Status(Code::kRemoteError,
                    "cannot reach the rendezvous root at " + root_.toString() +
                        " (it is hosted by the process that called myrGetUniqueId): " + s.message());
    }
    conn = Fd(fd.value());
    Handshake hello(Handshake::Role::kOpener, storeproto::helloKey(secret_), storeproto::helloIdent());
    Status s = hello.run(conn.get(), deadline, abort);
    if (s.isOk()) return s;
    conn.reset();
    const bool closed = hello.peerClosed();
    if (closed && attempt < kHelloAttempts && Clock::now() + pause < deadline && !(abort && abort->load())) {
      std::this_thread::sleep_for(pause);
      pause *= 2;
      continue;
    }
    return Status(s.code(), "rendezvous root " + root_.toString() + ": hello: " + s.message() +
                                (closed ? " (" + std::to_string(attempt) +
                                              " times: the root dropped this client, or it exited; or this "
                                              "process's unique id does not match the communicator's, or the "
                                              "root runs another Myriad version)"
                                        : ""));
  }
}

namespace storeproto {
auth::Key helloKey(const Secret& secret) {
  return auth::deriveKey(secret.data(), secret.size(), "myriad store hello v2");
}
HelloIdent helloIdent() {
  return HelloIdent{static_cast<uint8_t>(kHelloKind)};
}
}  // namespace storeproto

Result<std::vector<TcpStore::Reply>> TcpStore::request(const Bytes& wire, size_t replies, bool waits,
                                                       const std::string& what, Clock::time_point deadline,
                                                       const std::atomic<bool>* abort) {
  std::lock_guard<std::mutex> lock(mu_);
  std::string who = "rendezvous root " + root_.toString();
  for (int attempt = 0;; ++attempt) {
    // A wait that gave up left its reply owed on the main connection: the same request again waits for that
    // reply; any other request goes on a second connection meanwhile, so that the root is not asked for a
    // new connection and hello each time a waiting rank looks at something else.
    const bool resume = fd_.get() >= 0 && waits && owed_ == wire;
    const bool onMain = resume || owed_.empty() || fd_.get() < 0;
    Fd& conn = onMain ? fd_ : side_;
    if (onMain && !resume) owed_.clear();
    MYR_TRY(ensureConnected(conn, deadline, abort));
    Status s = resume ? Status::ok() : sendAll(conn.get(), wire.data(), wire.size(), deadline, who);
    bool waited = false;  // gave up before the reply began
    // Reads the reply in slices so that an abort is noticed while a get waits.
    while (s.isOk()) {
      pollfd p{conn.get(), POLLIN, 0};
      int rc = poll(&p, 1, pollSliceMs(deadline, abort != nullptr));
      if (rc > 0) break;
      if (abort && abort->load())
        s = Status(Code::kRemoteError, "aborted while waiting for " + what);
      else if (Clock::now() >= deadline)
        s = Status(Code::kTimeout, describe() + ": " + what + " not set in time");
      waited = !s.isOk();
    }
    if (waited && waits && onMain) {
      owed_ = wire;  // the connection stays; the next such request reads the reply
      return s;
    }
    std::vector<Reply> out(replies);
    for (Reply& r : out) {
      uint8_t found = 0;
      uint64_t len = 0;
      if (s.isOk()) s = recvAll(conn.get(), &found, 1, deadline, who);
      if (s.isOk() && found) s = recvAll(conn.get(), &len, 8, deadline, who);
      if (s.isOk() && len > kMaxStoreValue) s = Status(Code::kRemoteError, who + " sent an oversized value");
      r.found = found != 0;
      r.value.resize(found ? len : 0);
      if (s.isOk() && len) s = recvAll(conn.get(), r.value.data(), len, deadline, who);
    }
    if (onMain) owed_.clear();
    if (s.isOk()) return out;
    // The connection's state is unknown after a failure: drop it; retry once if the server closed it.
    conn.reset();
    if (s.code() == Code::kRemoteError && attempt > 0)
      s = Status(Code::kRemoteError, who +
                                         " closed the connection: this process's unique id does not match the "
                                         "communicator's (wrong secret), or the root has exited (" +
                                         s.message() + ")");
    if (attempt > 0 || s.code() == Code::kTimeout || (abort && abort->load())) return s;
  }
}

Result<Bytes> TcpStore::one(uint8_t op, const std::string& key, const Bytes* value, Clock::time_point deadline,
                            const std::atomic<bool>* abort) {
  MYR_TRY(checkStoreKey(key));
  Writer w;
  w.reserve(1 + 4 + key.size() + (value ? 8 + value->size() : 0));
  w.u8(op);
  w.str(key);
  if (value) {
    w.u64(value->size());
    w.raw(value->data(), value->size());
  }
  MYR_ASSIGN_OR_RETURN(std::vector<Reply> got,
                       request(w.bytes(), 1, op == storeproto::kGetWait, "key '" + key + "'", deadline, abort));
  if (!got[0].found) return notSupported("absent");
  return std::move(got[0].value);
}

Status TcpStore::set(const std::string& key, const Bytes& value) {
  if (value.size() > kMaxStoreValue) return invalidArgument("store value over 64 MiB");
  auto r = one(storeproto::kSet, key, &value, deadlineIn(connectTimeoutMs_), nullptr);
  return r.isOk() || r.status().code() == Code::kNotSupported ? Status::ok() : r.takeStatus();
}

Result<Bytes> TcpStore::get(const std::string& key, int timeoutMs, const std::atomic<bool>* abort) {
  return one(storeproto::kGetWait, key, nullptr, deadlineIn(timeoutMs), abort);
}

Result<Bytes> TcpStore::tryGet(const std::string& key) {
  return one(storeproto::kTryGet, key, nullptr, deadlineIn(connectTimeoutMs_), nullptr);
}

Result<Store::WaitAll> TcpStore::waitAll(const std::vector<std::string>& keys, const std::string& stopKey,
                                         int timeoutMs, const std::atomic<bool>* abort) {
  if (keys.empty() || keys.size() > storeproto::kMaxWaitKeys)
    return invalidArgument("store wait-all of " + std::to_string(keys.size()) + " keys (1 to " +
                           std::to_string(storeproto::kMaxWaitKeys) + ")");
  if (!stopKey.empty()) MYR_TRY(checkStoreKey(stopKey));
  Writer w;
  w.reserve(1 + 4 + stopKey.size() + 4 + keys.size() * (4 + kMaxStoreKey));
  w.u8(storeproto::kWaitAll);
  w.str(stopKey);
  w.u32(static_cast<uint32_t>(keys.size()));
  for (const std::string& k : keys) {
    MYR_TRY(checkStoreKey(k));
    w.str(k);
  }
  std::string what = keys.size() == 1 ? "key" : "one of keys";  // the first few named
  for (size_t i = 0; i < keys.size() && i < 6; ++i) what += (i ? ", '" : " '") + keys[i] + "'";
  if (keys.size() > 6) what += " and " + std::to_string(keys.size() - 6) + " more";
  MYR_ASSIGN_OR_RETURN(std::vector<Reply> got,
                       request(w.bytes(), 1 + keys.size(), true, what, deadlineIn(timeoutMs), abort));
  WaitAll out;
  if (got[0].found) {
    out.stopped = true;
    out.stop = std::move(got[0].value);
    return out;
  }
  for (size_t i = 1; i < got.size(); ++i) {
    if (!got[i].found)
      return Status(Code::kRemoteError, describe() + " answered a wait-all without key '" + keys[i - 1] + "'");
    out.values.push_back(std::move(got[i].value));
  }
  return out;
}

}  // namespace myriad
