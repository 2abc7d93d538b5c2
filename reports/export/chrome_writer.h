// A small streaming JSON writer for the Chrome-trace export: events go through a 1 MiB buffer to
// a temp file, so millions of events never become one DOM. Strings are escaped by nlohmann::json
// (invalid UTF-8 becomes U+FFFD) and interned names are escaped once per StringId.
#pragma once

#include <cstdint>
#include <cstdio>
#include <string>
#include <string_view>
#include <vector>

#include "tracegate/analyzer/model.h"
#include "tracegate/analyzer/status.h"

namespace tg::internal {

class JsonStream {
 public:
  explicit JsonStream(FILE* f) : file_(f) { buf_.reserve(kFlushAt + 4096); }
  JsonStream(const JsonStream&) = delete;
  JsonStream& operator=(const JsonStream&) = delete;

  JsonStream& Raw(std::string_view s) {
    buf_.append(s);
    if (buf_.size() >= kFlushAt) Flush();
    return *this;
  }
  JsonStream& Int(int64_t v);
  JsonStream& Double(double v);  // finite values only; non-finite are written as null
  // Microseconds with exactly three decimals from a nanosecond count: exact, no double involved.
  JsonStream& Micros(int64_t ns);
  JsonStream& Str(std::string_view s);  // quoted and escaped
  JsonStream& Key(std::string_view k) { return Str(k).Raw(":"); }

  // Writes what is buffered; returns false once any write has failed.
  bool Flush();
  bool failed() const { return failed_; }

 private:
  static constexpr size_t kFlushAt = 1 << 20;
  FILE* file_;
  std::string buf_;
  bool failed_ = false;
};

// Escaped (quoted) interned strings, computed on first use.
class EscapedNames {
 public:
  explicit EscapedNames(const StringTable& strings) : strings_(strings), cache_(strings.size()) {}
  const std::string& Get(StringId id);

 private:
  const StringTable& strings_;
  std::vector<std::string> cache_;  // empty = not computed yet (an escaped string is never empty)
};

std::string EscapeJsonString(std::string_view s);

}  // namespace tg::internal
