// StringTable: interned strings. Every name in the trace model is a uint32_t id into one table,
// so a million launches of the same kernel cost one string. Id 0 is always the empty string.
#pragma once

#include <array>
#include <cstdint>
#include <deque>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace tg {

// printf into a std::string, never truncated (the one formatter of the project).
std::string StrFormat(const char* format, ...) __attribute__((format(printf, 1, 2)));

// True when `s` is well-formed UTF-8 (no overlong forms, surrogates or code points > U+10FFFF).
bool IsValidUtf8(std::string_view s);
// `s` with every byte that is not part of a well-formed UTF-8 sequence replaced by U+FFFD.
std::string RepairUtf8(std::string_view s);

using StringId = uint32_t;

class StringTable {
 public:
  StringTable();
  StringTable(const StringTable&) = delete;
  StringTable& operator=(const StringTable&) = delete;
  StringTable(StringTable&&) = default;
  StringTable& operator=(StringTable&&) = default;

  StringId Intern(std::string_view s);
  // Changes the text behind `id` (FinalizeTrace repairs invalid UTF-8 this way). Find() keeps
  // answering the old text with this id; call it only after the table is complete.
  void Replace(StringId id, std::string_view s);
  // Returns the id if the string was interned before, else nullopt-like UINT32_MAX.
  StringId Find(std::string_view s) const;
  std::string_view View(StringId id) const { return views_[id]; }
  size_t size() const { return views_.size(); }

  static constexpr StringId kEmpty = 0;
  static constexpr StringId kNotFound = UINT32_MAX;

 private:
  struct Hash {
    using is_transparent = void;
    size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
  };
  // Strings live in fixed chunks that never move, so string_views into them stay valid.
  std::deque<std::string> chunks_;       // shared 1 MiB chunks; only back() is written to
  std::deque<std::string> large_;        // strings over a quarter chunk, one each
  size_t chunk_used_ = 0;
  std::vector<std::string_view> views_;
  std::unordered_map<std::string_view, StringId, Hash, std::equal_to<>> index_;
  // Ids of recent Intern() calls, by a cheap key of the text (its length and its bytes: all of
  // them up to 96, three 8-byte samples of a longer one). An import asks for the same names over
  // and over (a step's Python frames: hundreds); a hit costs one compare with the stored text
  // instead of hashing all of it and a lookup. A stale slot is only a miss.
  static constexpr size_t kRecent = 4096;
  std::array<StringId, kRecent> recent_;
};

}  // namespace tg
