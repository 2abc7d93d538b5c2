#include "analyzer/analysis/name_matcher.h"

#include <locale>
#include <mutex>

namespace tg::internal {

void WarmRegexLocale() {
  static std::once_flag once;
  std::call_once(once, [] {
    const auto& ctype = std::use_facet<std::ctype<char>>(std::locale());
    for (int c = 0; c < 256; ++c) ctype.narrow(static_cast<char>(c), '\0');  // the default the scanner passes
  });
}

namespace {

// The index of the ']' that closes the class opening at pattern[open] ('['); npos when it never
// closes or is empty ("[]", "[^]": cases the readers below do not try to tell).
size_t ClassEnd(std::string_view pattern, size_t open) {
  size_t j = open + 1;
  if (j < pattern.size() && pattern[j] == '^') ++j;
  if (j < pattern.size() && pattern[j] == ']') return std::string_view::npos;
  for (; j < pattern.size() && pattern[j] != ']'; ++j)
    if (pattern[j] == '\\') ++j;
  return j < pattern.size() ? j : std::string_view::npos;
}

// Calls on(i) for each byte of pattern[from, ...) that begins a token, escapes and classes
// included ("\\x" and "[...]" are then skipped whole), until it answers 0 (false) or 1 (true); -1
// goes on. -1 at the end, 0 at an empty or unclosed class.
template <class F>
int WalkTokens(std::string_view pattern, size_t from, F on) {
  for (size_t i = from; i < pattern.size(); ++i) {
    if (const int r = on(i); r >= 0) return r;
    if (pattern[i] == '\\') {
      ++i;
    } else if (pattern[i] == '[') {
      i = ClassEnd(pattern, i);
      if (i == std::string_view::npos) return 0;
    }
  }
  return -1;
}

// Whether every match of the ECMAScript `pattern` must start at the beginning of the text: it
// starts with '^' and has no '|' outside groups (where the '^' would bind to the first
// alternative only). Unsure cases (an empty class, unbalanced brackets) answer false.
bool AnchoredAtStart(std::string_view pattern) {
  if (pattern.empty() || pattern[0] != '^') return false;
  int depth = 0;
  const int r = WalkTokens(pattern, 1, [&](size_t i) {
    const char c = pattern[i];
    if (c == '(') ++depth;
    else if (c == ')' && --depth < 0) return 0;
    else if (c == '|' && depth == 0) return 0;
    return -1;
  });
  return r < 0 ? depth == 0 : r == 1;
}

bool WordByte(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_'; }

// A quantifier that lets what precedes it occur zero times ('+' does not).
bool MayBeAbsent(std::string_view pattern, size_t at) {
  return at < pattern.size() && (pattern[at] == '?' || pattern[at] == '*' || pattern[at] == '{');
}

}  // namespace

bool FirstBytes(std::string_view pattern, std::array<bool, 256>& first) {
  first.fill(false);
  if (!AnchoredAtStart(pattern)) return false;
  auto add = [&](char c) {
    first[static_cast<unsigned char>(c)] = true;
    if (c >= 'a' && c <= 'z') first[static_cast<unsigned char>(c - 'a' + 'A')] = true;
    if (c >= 'A' && c <= 'Z') first[static_cast<unsigned char>(c - 'A' + 'a')] = true;
  };
  size_t i = 1;  // after '^'
  if (i < pattern.size() && WordByte(pattern[i])) {
    if (MayBeAbsent(pattern, i + 1)) return false;
    add(pattern[i]);
    return true;
  }
  if (i >= pattern.size() || pattern[i] != '(') return false;
  ++i;
  if (pattern.compare(i, 2, "?:") == 0) {
    i += 2;
  } else if (i < pattern.size() && pattern[i] == '?') {
    return false;  // a lookahead: "(?=" or "(?!"
  }
  // Each alternative of the group, at depth 0 inside it: its first byte. True at the group's end
  // (false when it never ends).
  bool at_start = true;
  int depth = 0;
  return WalkTokens(pattern, i, [&](size_t k) {
           const char c = pattern[k];
           if (at_start) {
             if (!WordByte(c) || MayBeAbsent(pattern, k + 1)) return 0;
             add(c);
             at_start = false;
           } else if (c == '(') {
             ++depth;
           } else if (c == ')') {
             if (depth == 0) return MayBeAbsent(pattern, k + 1) ? 0 : 1;  // the group's end
             --depth;
           } else if (c == '|' && depth == 0) {
             at_start = true;
           }
           return -1;
         }) == 1;
}

Status CompileNameMatcher(const Trace& t, const std::string& pattern, std::string_view option, NameMatcher* m) {
  try {
    m->re = std::regex(pattern, std::regex::ECMAScript | std::regex::icase);
    m->flags = AnchoredAtStart(pattern) ? std::regex_constants::match_continuous : std::regex_constants::match_default;
    m->first_known = FirstBytes(pattern, m->first);
  } catch (const std::regex_error& e) {
    return InvalidInput(std::string(option) + ": invalid regular expression '" + pattern + "': " + e.what());
  }
  m->verdict.assign(t.strings.size(), -1);
  m->trace = &t;
  return Status::Ok();
}

}  // namespace tg::internal
