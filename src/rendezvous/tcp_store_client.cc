// TcpStore: the client side; one persistent connection per store, requests serialised by a mutex.
#include <poll.h>

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

Result<Bytes> TcpStore::request(uint8_t op, const std::string& key, const Bytes* value, Clock::time_point deadline,
                                const std::atomic<bool>* abort) {
  MYR_TRY(checkStoreKey(key));
  std::lock_guard<std::mutex> lock(mu_);
  std::string who = "rendezvous root " + root_.toString();
  for (int attempt = 0;; ++attempt) {
    // A get-wait that gave up left its reply owed on the main connection: the same get again waits for that
    // reply; any other request goes on a second connection meanwhile, so that the root is not asked for a
    // new connection and hello each time a waiting rank looks at something else.
    const bool resume = fd_.get() >= 0 && op == storeproto::kGetWait && owed_ == key;
    const bool onMain = resume || owed_.empty() || fd_.get() < 0;
    Fd& conn = onMain ? fd_ : side_;
    if (onMain && !resume) owed_.clear();
    MYR_TRY(ensureConnected(conn, deadline, abort));
    Writer w;
    w.u8(op);
    w.str(key);
    if (value) {
      w.u64(value->size());
      w.raw(value->data(), value->size());
    }
    Status s = resume ? Status::ok() : sendAll(conn.get(), w.bytes().data(), w.bytes().size(), deadline, who);
    bool waited = false;  // gave up before the reply began
    uint8_t found = 0;
    uint64_t len = 0;
    // Reads the reply in short slices so that an abort is noticed while a get waits.
    while (s.isOk()) {
      pollfd p{conn.get(), POLLIN, 0};
      int rc = poll(&p, 1, 10);
      if (rc > 0) break;
      if (abort && abort->load())
        s = Status(Code::kRemoteError, "aborted while waiting for key '" + key + "'");
      else if (Clock::now() >= deadline)
        s = Status(Code::kTimeout, describe() + ": key '" + key + "' not set in time");
      waited = !s.isOk();
    }
    if (waited && op == storeproto::kGetWait && onMain) {
      owed_ = key;  // the connection stays; the next get of this key reads the reply
      return s;
    }
    if (s.isOk()) s = recvAll(conn.get(), &found, 1, deadline, who);
    if (s.isOk() && found) s = recvAll(conn.get(), &len, 8, deadline, who);
    if (s.isOk() && len > kMaxStoreValue) s = Status(Code::kRemoteError, who + " sent an oversized value");
    Bytes out(found ? len : 0);
    if (s.isOk() && len) s = recvAll(conn.get(), out.data(), len, deadline, who);
    if (onMain) owed_.clear();
    if (s.isOk()) {
      if (!found) return notSupported("absent");
      return out;
    }
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

Status TcpStore::set(const std::string& key, const Bytes& value) {
  if (value.size() > kMaxStoreValue) return invalidArgument("store value over 64 MiB");
  auto r = request(storeproto::kSet, key, &value, deadlineIn(connectTimeoutMs_), nullptr);
  return r.isOk() || r.status().code() == Code::kNotSupported ? Status::ok() : r.takeStatus();
}

Result<Bytes> TcpStore::get(const std::string& key, int timeoutMs, const std::atomic<bool>* abort) {
  return request(storeproto::kGetWait, key, nullptr, deadlineIn(timeoutMs), abort);
}

Result<Bytes> TcpStore::tryGet(const std::string& key) {
  return request(storeproto::kTryGet, key, nullptr, deadlineIn(connectTimeoutMs_), nullptr);
}

}  // namespace myriad
