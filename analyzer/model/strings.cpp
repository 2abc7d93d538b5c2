#include "tracegate/analyzer/strings.h"

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
  recent_.fill(kNotFound);
  views_.emplace_back();
  index_.emplace(std::string_view(), kEmpty);
}

namespace {
// Length of the well-formed UTF-8 sequence at s[i], or 0 when it is not one (RFC 3629).
size_t Utf8SequenceLength(std::string_view s, size_t i) {
  const auto byte = [&](size_t k) { return static_cast<unsigned char>(s[k]); };
  const unsigned char c = byte(i);
  if (c < 0x80) return 1;
  size_t n = c >= 0xC2 && c <= 0xDF ? 2 : c >= 0xE0 && c <= 0xEF ? 3 : c >= 0xF0 && c <= 0xF4 ? 4 : 0;
  if (n == 0 || i + n > s.size()) return 0;
  unsigned char lo = 0x80, hi = 0xBF;  // the second byte's range depends on the first
  if (c == 0xE0) lo = 0xA0;
  if (c == 0xED) hi = 0x9F;            // no UTF-16 surrogates
  if (c == 0xF0) lo = 0x90;
  if (c == 0xF4) hi = 0x8F;            // nothing above U+10FFFF
  if (byte(i + 1) < lo || byte(i + 1) > hi) return 0;
  for (size_t k = 2; k < n; ++k)
    if ((byte(i + k) & 0xC0) != 0x80) return 0;
  return n;
}
}  // namespace

bool IsValidUtf8(std::string_view s) {
  for (size_t i = 0; i < s.size();) {
    if (static_cast<unsigned char>(s[i]) < 0x80) {
      ++i;
      continue;
    }
    size_t n = Utf8SequenceLength(s, i);
    if (n == 0) return false;
    i += n;
  }
  return true;
}

std::string RepairUtf8(std::string_view s) {
  std::string out;
  out.reserve(s.size() + 8);
  for (size_t i = 0; i < s.size();) {
    size_t n = Utf8SequenceLength(s, i);
    if (n == 0) {
      out += "\xEF\xBF\xBD";  // U+FFFD for the one bad byte; the next byte starts afresh
      ++i;
    } else {
      out.append(s.substr(i, n));
      i += n;
    }
  }
  return out;
}

void StringTable::Replace(StringId id, std::string_view s) {
  large_.emplace_back(s);
  views_[id] = large_.back();
  recent_.fill(kNotFound);  // forget the old text's slot (a later Intern of it caches `id` again)
}

namespace {

uint64_t Load8(const char* p, size_t n) {  // up to 8 bytes, zero-padded
  uint64_t v = 0;
  if (n > 0) std::memcpy(&v, p, n < 8 ? n : 8);  // an empty view's data() may be null
  return v;
}

// Names up to this long are mixed whole into their slot; longer ones by their first, middle and
// last 8 bytes (kernel names share long prefixes, so the end and the middle matter).
constexpr size_t kWholeBytes = 96;

// The slot of `s` in StringTable::recent_, from its length and its bytes. Python frames
// ("torch/nn/modules/linear.py(447): forward") differ from one another in a line number that the
// three samples of a long name can miss; mixed whole, the hot names of a trace seldom share a
// slot.
size_t RecentSlot(std::string_view s, size_t slots) {
  const size_t n = s.size();
  uint64_t h = n * 0x9E3779B97F4A7C15ull;
  const auto mix = [&h](uint64_t w) {
    h = (h ^ w) * 0xBF58476D1CE4E5B9ull;
    h ^= h >> 29;
  };
  if (n <= 8) {
    mix(Load8(s.data(), n));
  } else if (n <= kWholeBytes) {
    for (size_t i = 0; i + 8 <= n; i += 8) mix(Load8(s.data() + i, 8));
    if (n % 8 != 0) mix(Load8(s.data() + n - 8, 8));
  } else {
    mix(Load8(s.data(), 8));
    mix(Load8(s.data() + n / 2 - 4, 8));
    mix(Load8(s.data() + n - 8, 8));
  }
  h = (h ^ (h >> 32)) * 0x9E3779B97F4A7C15ull;
  return static_cast<size_t>(h >> 40) % slots;
}

}  // namespace

StringId StringTable::Intern(std::string_view s) {
  const size_t slot = RecentSlot(s, kRecent);
  if (const StringId id = recent_[slot]; id < views_.size() && views_[id] == s) return id;
  if (auto it = index_.find(s); it != index_.end()) return recent_[slot] = it->second;
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
  return recent_[slot] = id;
}

StringId StringTable::Find(std::string_view s) const {
  auto it = index_.find(s);
  return it == index_.end() ? kNotFound : it->second;
}

}  // namespace tg
