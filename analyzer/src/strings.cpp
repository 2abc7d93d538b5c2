#include "tracegate/strings.h"

#include <cstdarg>
#include <cstdio>

#include <cstring>

namespace tg {

std::string StrFormat(const char* format, ...) {
  va_list args;
  va_start(args, format);
  va_list again;
  va_copy(again, args);
  char small[256];
  int n = std::vsnprintf(small, sizeof small, format, args);
  va_end(args);
  std::string out;
  if (n >= 0 && static_cast<size_t>(n) < sizeof small) {
    out.assign(small, static_cast<size_t>(n));
  } else if (n > 0) {
    out.resize(static_cast<size_t>(n));
    std::vsnprintf(out.data(), out.size() + 1, format, again);
  }
  va_end(again);
  return out;
}

namespace {
constexpr size_t kChunkBytes = 1 << 20;
}

StringTable::StringTable() {
  views_.emplace_back();
  index_.emplace(std::string_view(), kEmpty);
}

StringId StringTable::Intern(std::string_view s) {
  if (auto it = index_.find(s); it != index_.end()) return it->second;
  std::string_view stored;
  if (s.size() > kChunkBytes / 4) {
    // Large strings get a chunk of their own so they do not waste the shared chunk.
    large_.emplace_back(s);
    stored = large_.back();
  } else {
    if (chunks_.empty() || chunk_used_ + s.size() > kChunkBytes) {
      chunks_.emplace_back();
      chunks_.back().resize(kChunkBytes);
      chunk_used_ = 0;
    }
    char* dst = chunks_.back().data() + chunk_used_;
    std::memcpy(dst, s.data(), s.size());
    chunk_used_ += s.size();
    stored = std::string_view(dst, s.size());
  }
  auto id = static_cast<StringId>(views_.size());
  views_.push_back(stored);
  index_.emplace(stored, id);
  return id;
}

StringId StringTable::Find(std::string_view s) const {
  auto it = index_.find(s);
  return it == index_.end() ? kNotFound : it->second;
}

}  // namespace tg
