// Status: the one error type returned by every stage (import, store, analysis, writers).
// Nothing in the analyzer throws across a public API; callers must look at the result.
#pragma once

#include <cassert>
#include <optional>
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

// A value or the error that prevented it. `value()` may only be called when ok().
template <class T>
class [[nodiscard]] StatusOr {
 public:
  StatusOr(T value) : value_(std::move(value)) {}  // NOLINT: implicit, as absl::StatusOr
  StatusOr(Status status) : status_(std::move(status)) { assert(!status_.ok()); }  // NOLINT
  bool ok() const { return status_.ok(); }
  const Status& status() const { return status_; }
  T& value() & { assert(ok()); return *value_; }
  const T& value() const& { assert(ok()); return *value_; }
  T&& value() && { assert(ok()); return std::move(*value_); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }

 private:
  Status status_;
  std::optional<T> value_;
};

}  // namespace tg

// Returns the Status of `expr` from the calling function when it is not ok.
#define TG_RETURN_IF_ERROR(expr)                                       \
  do {                                                                 \
    if (::tg::Status tg_status_ = (expr); !tg_status_.ok()) return tg_status_; \
  } while (0)

namespace tg {

}  // namespace tg
