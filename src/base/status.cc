// Status helpers: code names, C conversion, errno formatting.
#include "base/status.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace myriad {

const char* codeName(Code code) {
  switch (code) {
    case Code::kSuccess: return "success";
    case Code::kUnhandledCudaError: return "unhandled CUDA error";
    case Code::kSystemError: return "system error";
    case Code::kInternalError: return "internal error";
    case Code::kInvalidArgument: return "invalid argument";
    case Code::kInvalidUsage: return "invalid usage";
    case Code::kRemoteError: return "remote error";
    case Code::kInProgress: return "in progress";
    case Code::kTimeout: return "timeout";
    case Code::kNotSupported: return "not supported";
  }
  return "unknown result";
}

Status& Status::addContext(const std::string& context) {
  if (!isOk()) message_ = context + ": " + message_;
  return *this;
}

std::string Status::toString() const {
  return std::string(codeName(code_)) + ": " + message_;
}

myrResult_t Status::toC() const {
  if (code_ == Code::kNotSupported) return myrInvalidUsage;
  return static_cast<myrResult_t>(code_);
}

Status invalidArgument(std::string message) {
  return Status(Code::kInvalidArgument, std::move(message));
}
Status invalidUsage(std::string message) {
  return Status(Code::kInvalidUsage, std::move(message));
}
Status internalError(std::string message) {
  return Status(Code::kInternalError, std::move(message));
}
Status notSupported(std::string message) {
  return Status(Code::kNotSupported, std::move(message));
}

Status systemError(const std::string& what, int err) {
  char buf[128];
  const char* text = strerror_r(err, buf, sizeof(buf));
  return Status(Code::kSystemError, what + ": errno " + std::to_string(err) + " (" + text + ")");
}

void assertFailed(const char* cond, const char* file, int line) {
  std::fprintf(stderr, "myriad: internal assertion failed: %s at %s:%d\n", cond, file, line);
  std::abort();
}

}  // namespace myriad
