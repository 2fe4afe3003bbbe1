// The challenge-response hello (see hello.h): a small state machine per side that reads exactly its own
// bytes, so the caller's frames that follow on the socket are never consumed here.
#include "base/hello.h"

#include <poll.h>
#include <sys/socket.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

namespace myriad {
namespace {
constexpr size_t kOpenBytes = 4 + 4 + 16 + 12;
constexpr size_t kAnswerBytes = 4 + 4 + 16 + 32;
constexpr size_t kProofBytes = 32;

bool wouldBlock(int err) {
  return err == EAGAIN || err == EWOULDBLOCK || err == EINTR;
}

// resize + memcpy: GCC 12 misreads vector::insert of a few bytes as an overflow (-Wstringop-overflow).
void append(std::vector<uint8_t>& v, const void* p, size_t n) {
  const size_t at = v.size();
  v.resize(at + n);
  std::memcpy(v.data() + at, p, n);
}
}  // namespace

Handshake::Handshake(Role role, const auth::Key& key, HelloIdent ident, std::vector<uint32_t> legacyMagics)
    : role_(role), key_(key), ident_(ident), legacy_(std::move(legacyMagics)), mine_(auth::nonce()) {
  if (role_ == Role::kAccepter) return;
  nonceO_ = mine_;
  append(out_, &kHelloMagic, 4);
  append(out_, &kHelloVersion, 4);
  append(out_, mine_.data(), mine_.size());
  append(out_, ident_.data(), ident_.size());
}

auth::Mac Handshake::mac(const char* who) const {
  const std::string label = std::string("myriad hello v2 ") + who;
  return auth::hmac(key_, {{label.data(), label.size()},
                           {ident_.data(), ident_.size()},
                           {nonceO_.data(), nonceO_.size()},
                           {nonceA_.data(), nonceA_.size()}});
}

Status Handshake::checkHeader() const {
  if (in_.size() < 4) return Status::ok();
  uint32_t magic, version;
  std::memcpy(&magic, in_.data(), 4);
  if (std::find(legacy_.begin(), legacy_.end(), magic) != legacy_.end())
    return Status(Code::kRemoteError, "peer speaks hello version 1, this build speaks " +
                                          std::to_string(kHelloVersion) +
                                          " (a Myriad build from before the challenge-response hello)");
  if (magic != kHelloMagic) return Status(Code::kRemoteError, "not a Myriad hello");
  if (in_.size() < 8) return Status::ok();
  std::memcpy(&version, in_.data() + 4, 4);
  if (version != kHelloVersion)
    return Status(Code::kRemoteError, "peer speaks hello version " + std::to_string(version) + ", this build speaks " +
                                          std::to_string(kHelloVersion));
  return Status::ok();
}

Status Handshake::closed() {
  peerClosed_ = true;
  return Status(Code::kRemoteError, kHelloClosed);
}

Status Handshake::flush(int fd) {
  while (outDone_ < out_.size()) {
    ssize_t n = send(fd, out_.data() + outDone_, out_.size() - outDone_, MSG_DONTWAIT | MSG_NOSIGNAL);
    if (n < 0 && (errno == EPIPE || errno == ECONNRESET)) return closed();
    if (n < 0) return wouldBlock(errno) ? Status::ok() : systemError("hello: send", errno);
    append(sentLog_, out_.data() + outDone_, static_cast<size_t>(n));
    outDone_ += static_cast<size_t>(n);
  }
  return Status::ok();
}

Status Handshake::fill(int fd, size_t want, bool* complete) {
  *complete = false;
  const bool header = state_ == State::kOpen || (state_ == State::kAnswer && role_ == Role::kOpener);
  while (in_.size() < want) {
    uint8_t buf[64];
    ssize_t n = recv(fd, buf, std::min(sizeof(buf), want - in_.size()), MSG_DONTWAIT);
    if (n == 0 || (n < 0 && errno == ECONNRESET)) return closed();
    if (n < 0) return wouldBlock(errno) ? Status::ok() : systemError("hello: recv", errno);
    append(in_, buf, static_cast<size_t>(n));
    if (header) MYR_TRY(checkHeader());
  }
  *complete = true;
  return Status::ok();
}

Status Handshake::step(int fd) {
  bool complete = false;
  if (role_ == Role::kOpener) {
    if (state_ == State::kOpen) {
      MYR_TRY(flush(fd));
      if (outDone_ < out_.size()) return Status::ok();
      state_ = State::kAnswer;
    }
    if (state_ == State::kAnswer) {
      MYR_TRY(fill(fd, kAnswerBytes, &complete));
      if (!complete) return Status::ok();
      std::memcpy(nonceA_.data(), in_.data() + 8, 16);
      const auth::Mac proof = mac("opener");
      out_.assign(proof.begin(), proof.end());
      outDone_ = 0;
      state_ = State::kProof;
      if (!auth::equal(in_.data() + 24, mac("accepter").data(), 32)) {
        flush(fd).ignore();  // so that the accepter, too, logs the wrong secret
        return Status(Code::kRemoteError,
                      "the peer did not prove the communicator's secret (wrong secret on "
                      "one side, or not a member of this communicator)");
      }
    }
    MYR_TRY(flush(fd));
    if (outDone_ == out_.size()) state_ = State::kDone;
    return Status::ok();
  }
  if (state_ == State::kOpen) {
    MYR_TRY(fill(fd, kOpenBytes, &complete));
    if (!complete) return Status::ok();
    std::memcpy(nonceO_.data(), in_.data() + 8, 16);
    std::memcpy(ident_.data(), in_.data() + 24, ident_.size());
    nonceA_ = mine_;
    append(out_, &kHelloMagic, 4);
    append(out_, &kHelloVersion, 4);
    append(out_, nonceA_.data(), nonceA_.size());
    const auth::Mac m = mac("accepter");
    append(out_, m.data(), m.size());
    in_.clear();
    state_ = State::kAnswer;
  }
  if (state_ == State::kAnswer) {
    MYR_TRY(flush(fd));
    if (outDone_ < out_.size()) return Status::ok();
    state_ = State::kProof;
  }
  if (state_ == State::kProof) {
    MYR_TRY(fill(fd, kProofBytes, &complete));
    if (!complete) return Status::ok();
    if (!auth::equal(in_.data(), mac("opener").data(), kProofBytes))
      return Status(Code::kRemoteError, "wrong secret (not a member of this communicator)");
    state_ = State::kDone;
  }
  return Status::ok();
}

Status Handshake::run(int fd, Clock::time_point deadline, const std::atomic<bool>* abort) {
  while (true) {
    MYR_TRY(step(fd));
    if (done()) return Status::ok();
    if (abort && abort->load()) return Status(Code::kRemoteError, "aborted during the hello");
    if (Clock::now() >= deadline) return Status(Code::kTimeout, "no answer to the hello in time");
    const bool sending = outDone_ < out_.size();
    pollfd p{fd, static_cast<short>(sending ? POLLOUT : POLLIN), 0};
    ::poll(&p, 1, pollSliceMs(deadline, abort != nullptr));
  }
}

}  // namespace myriad
