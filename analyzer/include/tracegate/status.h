// Status: the one error type returned by every stage (import, store, analysis, writers).
// Nothing in the analyzer throws across a public API; callers must look at the result.
#pragma once

#include <string>
#include <utility>

namespace tg {

enum class StatusCode {
  kOk = 0,
  kInvalidInput,   // the input is not what it claims to be (bad JSON, not a trace, ...)
  kNotFound,       // missing file or table
  kIoError,        // read/write failed (permissions, disk full, ...)
  kUnsupported,    // a format or version we do not read
  kInternal,
};

class [[nodiscard]] Status {
 public:
  Status() = default;
  Status(StatusCode code, std::string message) : code_(code), message_(std::move(message)) {}

  static Status Ok() { return {}; }
  bool ok() const { return code_ == StatusCode::kOk; }
  StatusCode code() const { return code_; }
  const std::string& message() const { return message_; }

 private:
  StatusCode code_ = StatusCode::kOk;
  std::string message_;
};

inline Status InvalidInput(std::string msg) { return {StatusCode::kInvalidInput, std::move(msg)}; }
inline Status NotFound(std::string msg) { return {StatusCode::kNotFound, std::move(msg)}; }
inline Status IoError(std::string msg) { return {StatusCode::kIoError, std::move(msg)}; }
inline Status Unsupported(std::string msg) { return {StatusCode::kUnsupported, std::move(msg)}; }

}  // namespace tg
