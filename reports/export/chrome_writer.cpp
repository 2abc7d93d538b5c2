#include "reports/export/chrome_writer.h"

#include <charconv>
#include <cmath>
#include <nlohmann/json.hpp>

namespace tg::internal {

std::string EscapeJsonString(std::string_view s) {
  return nlohmann::json(std::string(s)).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

JsonStream& JsonStream::Int(int64_t v) {
  char tmp[24];
  auto r = std::to_chars(tmp, tmp + sizeof tmp, v);
  return Raw(std::string_view(tmp, static_cast<size_t>(r.ptr - tmp)));
}

JsonStream& JsonStream::Double(double v) {
  if (!std::isfinite(v)) return Raw("null");
  char tmp[32];
  auto r = std::to_chars(tmp, tmp + sizeof tmp, v);
  return Raw(std::string_view(tmp, static_cast<size_t>(r.ptr - tmp)));
}

JsonStream& JsonStream::Micros(int64_t ns) {
  // Unsigned magnitude so INT64_MIN cannot overflow on negation.
  uint64_t mag = ns < 0 ? 0 - static_cast<uint64_t>(ns) : static_cast<uint64_t>(ns);
  char tmp[32];
  char* p = tmp;
  if (ns < 0) *p++ = '-';
  p = std::to_chars(p, tmp + sizeof tmp, mag / 1000).ptr;
  unsigned frac = static_cast<unsigned>(mag % 1000);
  *p++ = '.';
  *p++ = static_cast<char>('0' + frac / 100);
  *p++ = static_cast<char>('0' + frac / 10 % 10);
  *p++ = static_cast<char>('0' + frac % 10);
  return Raw(std::string_view(tmp, static_cast<size_t>(p - tmp)));
}

JsonStream& JsonStream::Str(std::string_view s) {
  // Plain ASCII without characters that need escaping is the common case (keys, categories).
  for (char c : s) {
    auto u = static_cast<unsigned char>(c);
    if (u < 0x20 || u >= 0x80 || c == '"' || c == '\\') return Raw(EscapeJsonString(s));
  }
  buf_.push_back('"');
  buf_.append(s);
  buf_.push_back('"');
  return Raw("");
}

bool JsonStream::Flush() {
  if (!failed_ && !buf_.empty() && std::fwrite(buf_.data(), 1, buf_.size(), file_) != buf_.size())
    failed_ = true;
  buf_.clear();
  return !failed_;
}

const std::string& EscapedNames::Get(StringId id) {
  std::string& s = cache_[id];
  if (s.empty()) s = EscapeJsonString(strings_.View(id));
  return s;
}

}  // namespace tg::internal
