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

// Whether every match of the ECMAScript `pattern` must start at the beginning of the text: it
// starts with '^' and has no '|' outside groups (where the '^' would bind to the first
// alternative only). Unsure cases (an empty class, unbalanced brackets) answer false.
bool AnchoredAtStart(std::string_view pattern) {
  if (pattern.empty() || pattern[0] != '^') return false;
  int depth = 0;
  for (size_t i = 1; i < pattern.size(); ++i) {
    const char c = pattern[i];
    if (c == '\\') {
      ++i;
    } else if (c == '[') {
      size_t j = i + 1;
      if (j < pattern.size() && pattern[j] == '^') ++j;
      if (j < pattern.size() && pattern[j] == ']') return false;
      for (; j < pattern.size() && pattern[j] != ']'; ++j)
        if (pattern[j] == '\\') ++j;
      if (j >= pattern.size()) return false;
      i = j;
    } else if (c == '(') {
      ++depth;
    } else if (c == ')') {
      if (--depth < 0) return false;
    } else if (c == '|' && depth == 0) {
      return false;
    }
  }
  return depth == 0;
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
  // Each alternative of the group, at depth 0 inside it: its first byte.
  bool at_start = true;
  int depth = 0;
  for (; i < pattern.size(); ++i) {
    const char c = pattern[i];
    if (at_start) {
      if (!WordByte(c) || MayBeAbsent(pattern, i + 1)) return false;
      add(c);
      at_start = false;
      continue;
    }
    if (c == '\\') {
      ++i;
    } else if (c == '[') {
      size_t j = i + 1;
      if (j < pattern.size() && pattern[j] == '^') ++j;
      if (j < pattern.size() && pattern[j] == ']') return false;  // an empty class (as AnchoredAtStart)
      for (; j < pattern.size() && pattern[j] != ']'; ++j)
        if (pattern[j] == '\\') ++j;
      if (j >= pattern.size()) return false;
      i = j;
    } else if (c == '(') {
      ++depth;
    } else if (c == ')') {
      if (depth == 0) return !MayBeAbsent(pattern, i + 1);  // the group's end
      --depth;
    } else if (c == '|' && depth == 0) {
      at_start = true;
    }
  }
  return false;  // the group never ends
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
