// The production rendezvous store over TCP. The server runs as one thread in the process that called
// myrGetUniqueId and lives as long as that process; every client must prove the id's secret in the
// challenge-response hello (base/hello.h, ident storeproto::helloIdent()), or it is dropped and logged; the secret
// itself never crosses the wire. Protocol (little-endian): the hello; then requests (rendezvous/store_request.h)
// op u8 (1 set, 2 get-wait, 3 try-get, 4 wait-all) | key str | (set: value bytes; wait-all: keys); replies:
// u8 found | value bytes, one per key (a wait-all: its stop key's, then one per key waited for).
#pragma once

#include <memory>
#include <mutex>

#include "base/hello.h"
#include "base/socket.h"
#include "rendezvous/store.h"
#include "rendezvous/store_request.h"
#include "rendezvous/unique_id.h"

namespace myriad {

// The key under which the server publishes "hostname pid" of the process hosting it.
constexpr const char* kStoreOwnerKey = "root.owner";

// Starts a server on `addr` (port 0: any; updated). It runs until the process exits.
Status startTcpStoreServer(SockAddr* addr, const Secret& secret);

class TcpStore final : public Store {
 public:
  TcpStore(SockAddr root, Secret secret, int connectTimeoutMs)
      : root_(root), secret_(secret), connectTimeoutMs_(connectTimeoutMs) {}
  Status set(const std::string& key, const Bytes& value) override;
  Result<Bytes> get(const std::string& key, int timeoutMs, const std::atomic<bool>* abort) override;
  Result<Bytes> tryGet(const std::string& key) override;
  Result<WaitAll> waitAll(const std::vector<std::string>& keys, const std::string& stopKey, int timeoutMs,
                          const std::atomic<bool>* abort) override;
  void setTimeoutMs(int ms) override { connectTimeoutMs_ = ms; }
  std::string describe() const override { return "tcp store " + root_.toString(); }

 private:
  struct Reply {
    bool found = false;
    Bytes value;
  };
  // One request (its bytes, `wire`) and its `replies` on the persistent connection; reconnects once if it was
  // lost. `waits`: the root may hold the reply (get-wait, wait-all), and one given up on is owed. `what`
  // names the keys in messages.
  Result<std::vector<Reply>> request(const Bytes& wire, size_t replies, bool waits, const std::string& what,
                                     Clock::time_point deadline, const std::atomic<bool>* abort);
  // The single reply of a set, get or try-get of `key` (absent: Code::kNotSupported).
  Result<Bytes> one(uint8_t op, const std::string& key, const Bytes* value, Clock::time_point deadline,
                    const std::atomic<bool>* abort);
  Status ensureConnected(Fd& conn, Clock::time_point deadline, const std::atomic<bool>* abort);

  SockAddr root_;
  Secret secret_;
  std::atomic<int> connectTimeoutMs_;
  std::mutex mu_;
  Fd fd_;       // the main connection
  Fd side_;     // requests made while fd_ owes a reply (opened the first time one is)
  Bytes owed_;  // a wait on fd_ that gave up before its reply: the request whose reply fd_ owes
};

namespace storeproto {
constexpr uint32_t kLegacyHelloMagic = 0x5352594d;  // "MYRS": the version-1 hello, secret in clear
constexpr uint32_t kHelloKind = 0x53;               // 'S': the ident's first byte
// The hello's key and ident for a store of this secret.
auth::Key helloKey(const Secret& secret);
HelloIdent helloIdent();
}  // namespace storeproto

}  // namespace myriad
