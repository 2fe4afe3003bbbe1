// Status and Result<T>: how every failure inside Myriad travels (no exceptions inside).
// A Status carries a code that mirrors myrResult_t and a message built once, where the failure happened,
// with the facts (rank, peer, host, errno); callers add context only when they know something new.
#pragma once

#include <string>
#include <utility>
#include <variant>

#include "myriad/myriad.h"

namespace myriad {

enum class Code : int {
  kSuccess = myrSuccess,
  kUnhandledCudaError = myrUnhandledCudaError,
  kSystemError = myrSystemError,
  kInternalError = myrInternalError,
  kInvalidArgument = myrInvalidArgument,
  kInvalidUsage = myrInvalidUsage,
  kRemoteError = myrRemoteError,
  kInProgress = myrInProgress,
  kTimeout = myrTimeout,
  kNotSupported = 100,  // internal only: an algorithm or transport declines; never crosses the C API
};

const char* codeName(Code code);

class [[nodiscard]] Status {
 public:
  Status() = default;
  Status(Code code, std::string message) : code_(code), message_(std::move(message)) {}

  static Status ok() { return Status(); }
  bool isOk() const { return code_ == Code::kSuccess; }
  explicit operator bool() const { return isOk(); }
  Code code() const { return code_; }
  const std::string& message() const { return message_; }

  // Prefixes "context: " to the message; a no-op on success.
  Status& addContext(const std::string& context);
  // "<code name>: <message>"
  std::string toString() const;
  myrResult_t toC() const;
  void ignore() const {}

 private:
  Code code_ = Code::kSuccess;
  std::string message_;
};

Status invalidArgument(std::string message);
Status invalidUsage(std::string message);
Status internalError(std::string message);
Status notSupported(std::string message);
// A SystemError whose message ends with "errno N (strerror)".
Status systemError(const std::string& what, int err);

template <typename T>
class [[nodiscard]] Result {
 public:
  Result(T value) : v_(std::move(value)) {}         // NOLINT: implicit by design
  Result(Status status) : v_(std::move(status)) {}  // NOLINT: must not be ok

  bool isOk() const { return std::holds_alternative<T>(v_); }
  const Status& status() const {
    static const Status kOk;
    return isOk() ? kOk : std::get<Status>(v_);
  }
  Status takeStatus() { return isOk() ? Status() : std::move(std::get<Status>(v_)); }
  T& value() { return std::get<T>(v_); }
  const T& value() const { return std::get<T>(v_); }
  T&& take() { return std::move(std::get<T>(v_)); }

 private:
  std::variant<T, Status> v_;
};

}  // namespace myriad

// Returns the Status of `expr` from the enclosing function when it is not ok.
#define MYR_TRY(expr)                                    \
  do {                                                   \
    ::myriad::Status myr_try_status_ = (expr);           \
    if (!myr_try_status_.isOk()) return myr_try_status_; \
  } while (0)

// Declares `lhs` from a Result, or returns its Status.
#define MYR_ASSIGN_CONCAT_(a, b) a##b
#define MYR_ASSIGN_NAME_(line) MYR_ASSIGN_CONCAT_(myr_result_, line)
#define MYR_ASSIGN_OR_RETURN(lhs, expr)                                                   \
  auto MYR_ASSIGN_NAME_(__LINE__) = (expr);                                               \
  if (!MYR_ASSIGN_NAME_(__LINE__).isOk()) return MYR_ASSIGN_NAME_(__LINE__).takeStatus(); \
  lhs = MYR_ASSIGN_NAME_(__LINE__).take()

// A bug in Myriad itself: logs and aborts the process.
#define MYR_ASSERT(cond)                                            \
  do {                                                              \
    if (!(cond)) ::myriad::assertFailed(#cond, __FILE__, __LINE__); \
  } while (0)

namespace myriad {
[[noreturn]] void assertFailed(const char* cond, const char* file, int line);
}
